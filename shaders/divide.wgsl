// Division by a runtime value through a magic multiplier, shared by every pipeline (the pads'
// after common.wgsl, the gradient's before backward.wgsl); the host gives
// MAGIC_DIVIDE_BY_ONE and each divisor's magic and shift (src/gpu/params.rs, magic_divisor).

// The high 32 bits of a * b.
fn mulhi(a: u32, b: u32) -> u32 {
    let a_lo = a & 0xffffu;
    let a_hi = a >> 16u;
    let b_lo = b & 0xffffu;
    let b_hi = b >> 16u;
    let t = a_hi * b_lo + ((a_lo * b_lo) >> 16u);
    let u = (t & 0xffffu) + a_lo * b_hi;
    return a_hi * b_hi + (t >> 16u) + (u >> 16u);
}

// n / d for n < 2^31, given d's magic multiplier and shift (MAGIC_DIVIDE_BY_ONE: d == 1). Integer
// division by a runtime value is slow on many GPUs and scalarised on CPU-based ones.
fn divide(n: u32, magic: u32, shift: u32) -> u32 {
    return select(mulhi(n, magic) >> shift, n, magic == MAGIC_DIVIDE_BY_ONE);
}
