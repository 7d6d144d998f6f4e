// 16- or 8-bit elements, ELEMENT_BITS each, packed into u32 words (src/gpu/kernels/gradient.rs
// prepends ELEMENT_BITS and the type's `to_f32` and `from_f32`: float16.wgsl, bfloat16.wgsl or
// float8.wgsl). A sum is held as f32 and rounded to the type at each addition: f32's sum of two
// such values rounded again is the type's own correctly rounded sum (24 bits hold more than twice
// the type's precision, and 2 more), which is what the CPU path adds. Each element is stored
// alone, its bits of a word cleared then set by atomics, so lanes sharing a word (or a word
// shared with bytes outside the view) never lose each other's bits.

const PER_WORD: u32 = 32u / ELEMENT_BITS;
const ELEMENT_MASK: u32 = (1u << ELEMENT_BITS) - 1u;

fn load_bits(i: u32) -> u32 {
    return (src[i / PER_WORD] >> ((i % PER_WORD) * ELEMENT_BITS)) & ELEMENT_MASK;
}

fn store_bits(i: u32, bits: u32) {
    let shift = (i % PER_WORD) * ELEMENT_BITS;
    atomicAnd(&dst[i / PER_WORD], ~(ELEMENT_MASK << shift));
    atomicOr(&dst[i / PER_WORD], bits << shift);
}

fn load_src(i: u32) -> f32 {
    return to_f32(load_bits(i));
}

fn store_dst(i: u32, v: f32) {
    store_bits(i, from_f32(v));
}

// An element's own bits of the word: no lane writes them but its own.
fn load_dst(i: u32) -> f32 {
    return to_f32((atomicLoad(&dst[i / PER_WORD]) >> ((i % PER_WORD) * ELEMENT_BITS)) & ELEMENT_MASK);
}

// An element no sum touches (a plan that pads and crops nothing) keeps its bits, NaN payloads
// and signalling NaNs too (which widening to f32 and back could change).
fn copy_element(i: u32, j: u32) {
    store_bits(i, load_bits(j));
}

fn add_in_type(a: f32, b: f32) -> f32 {
    return to_f32(from_f32(add_f32(a, b)));
}

// WORDS (the gradient-words variant; never split, never in parts): a lane a word of grad_in,
// its PER_WORD elements consecutive from the word's first (the host dispatches it only where
// every row of the window is whole words), their bits stored at once where a lane an element
// takes two atomics each. The same bits as `finish_on_lane`'s.
fn word_on_lane(w: u32) {
    let first = w * PER_WORD;
    if (first >= P.count) {
        return;
    }
    var bits = 0u;
    var word = 0u;
    for (var j = 0u; j < PER_WORD; j++) {
        let at = element(first + j);
        if (j == 0u) {
            word = at.y / PER_WORD;
        }
        var b = 0u;
        if (at.z == 0u || (at.w == 1u && one_term)) {
            b = load_bits(at.x);
        } else {
            var v = 0.0;
            if (at.w == 1u) {
                v = nest(0u, at.x);
            }
            b = from_f32(v);
        }
        bits |= b << (j * ELEMENT_BITS);
    }
    atomicStore(&dst[word], bits);
}
