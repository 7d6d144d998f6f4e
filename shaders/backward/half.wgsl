// 16-bit elements, two to a u32 word (src/gpu/kernels/gradient.rs prepends `to_f32` and
// `from_f32` for float16 or bfloat16). A sum is held as f32 and rounded to the type at each
// addition: f32's sum of two such values rounded again is the type's own correctly rounded sum
// (24 bits hold twice the type's 11 or 8, and 2 more), which is what the CPU path adds. Each
// element is stored alone, its half of a word cleared then set by atomics, so two lanes sharing
// a word (or a word shared with bytes outside the view) never lose each other's bits.

fn load_bits(i: u32) -> u32 {
    return (src[i >> 1u] >> ((i & 1u) * 16u)) & 0xffffu;
}

fn store_bits(i: u32, bits: u32) {
    let shift = (i & 1u) * 16u;
    atomicAnd(&dst[i >> 1u], ~(0xffffu << shift));
    atomicOr(&dst[i >> 1u], bits << shift);
}

fn load_src(i: u32) -> f32 {
    return to_f32(load_bits(i));
}

fn store_dst(i: u32, v: f32) {
    store_bits(i, from_f32(v));
}

// An element no sum touches (a plan that pads and crops nothing) keeps its bits, a signalling
// NaN too (which widening to f32 and back would quiet).
fn copy_element(i: u32, j: u32) {
    store_bits(i, load_bits(j));
}

fn add_in_type(a: f32, b: f32) -> f32 {
    return to_f32(from_f32(a + b));
}
