// float16 <-> f32, bit for bit as the CPU path's `half` crate converts (its software path;
// the hardware's agrees on every value but NaN payloads): exact widening, round to nearest
// even narrowing, overflow to infinity, NaNs kept quiet with their payload's high bits.

fn to_f32(h: u32) -> f32 {
    let sign = (h & 0x8000u) << 16u;
    let e = (h >> 10u) & 0x1fu;
    let m = h & 0x3ffu;
    if (e == 0x1fu) {
        return bitcast<f32>(sign | 0x7f800000u | select(0u, 0x00400000u | (m << 13u), m != 0u));
    }
    if (e != 0u) {
        return bitcast<f32>(sign | ((e + 112u) << 23u) | (m << 13u));
    }
    // Zero or subnormal: m * 2^-24, exact in f32.
    let v = f32(m) * 5.9604644775390625e-8;
    return select(v, -v, sign != 0u);
}

fn from_f32(v: f32) -> u32 {
    let x = bitcast<u32>(v);
    let sign = (x >> 16u) & 0x8000u;
    let exp = x & 0x7f800000u;
    let man = x & 0x007fffffu;
    if (exp == 0x7f800000u) {
        return sign | 0x7c00u | select(0u, 0x0200u, man != 0u) | (man >> 13u);
    }
    let e = i32(exp >> 23u) - 112;
    if (e >= 31) {
        return sign | 0x7c00u;
    }
    if (e <= 0) {
        if (e < -10) {
            return sign;
        }
        let m = man | 0x00800000u;
        let shift = u32(14 - e);
        let round_bit = 1u << (shift - 1u);
        let h = m >> shift;
        return sign | select(h, h + 1u, (m & round_bit) != 0u && (m & (3u * round_bit - 1u)) != 0u);
    }
    let h = sign | (u32(e) << 10u) | (man >> 13u);
    return select(h, h + 1u, (man & 0x1000u) != 0u && (man & 0x2fffu) != 0u);
}
