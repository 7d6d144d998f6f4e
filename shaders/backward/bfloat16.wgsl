// bfloat16 <-> f32, bit for bit as the CPU path's `half` crate converts: the high half of an
// f32, narrowed by round to nearest even, NaNs kept quiet.

fn to_f32(h: u32) -> f32 {
    return bitcast<f32>(select(h, h | 0x40u, (h & 0x7fffu) > 0x7f80u) << 16u);
}

fn from_f32(v: f32) -> u32 {
    let x = bitcast<u32>(v);
    if ((x & 0x7fffffffu) > 0x7f800000u) {
        return (x >> 16u) | 0x40u;
    }
    let h = x >> 16u;
    return select(h, h + 1u, (x & 0x8000u) != 0u && (x & 0x17fffu) != 0u);
}
