// 8-bit elements, four to a u32 word (src/gpu/kernels/gradient.rs prepends `to_f32` and
// `from_f32`: float8.wgsl). A sum is held as f32 and rounded to the type at each addition,
// as the CPU path adds (f32's sum of two float8 values is exact, so rounding it once is the
// type's own correctly rounded sum). Each element is stored alone, its byte of a word
// cleared then set by atomics, so lanes sharing a word (or a word shared with bytes outside
// the view) never lose each other's bits.

fn load_bits(i: u32) -> u32 {
    return (src[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu;
}

fn store_bits(i: u32, bits: u32) {
    let shift = (i & 3u) * 8u;
    atomicAnd(&dst[i >> 2u], ~(0xffu << shift));
    atomicOr(&dst[i >> 2u], bits << shift);
}

fn load_src(i: u32) -> f32 {
    return to_f32(load_bits(i));
}

fn store_dst(i: u32, v: f32) {
    store_bits(i, from_f32(v));
}

// An element no sum touches (a plan that pads and crops nothing) keeps its bits, NaNs too.
fn copy_element(i: u32, j: u32) {
    store_bits(i, load_bits(j));
}

fn add_in_type(a: f32, b: f32) -> f32 {
    return to_f32(from_f32(a + b));
}
