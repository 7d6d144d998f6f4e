// float8 <-> f32, bit for bit as the CPU path's src/cpu/float8.rs (ml_dtypes' arithmetic):
// exact widening; narrowing to nearest with ties to the even pattern, a magnitude past
// F8_BOUNDARY (or at it, unless F8_MAX_KEEPS_TIE) to the type's infinity (float8e5m2) or its
// NaN, every NaN to the type's one NaN F8_NAN. The type's constants (F8_*, its mantissa bits,
// exponent bias, whether it is an fnuz type: 0x80 its NaN and no -0, whether it has infinities)
// come from src/gpu/kernels/gradient.rs.

const F8_QUIET_NAN: u32 = 0x7fc00000u;

fn to_f32(b: u32) -> f32 {
    let magnitude = b & 0x7fu;
    let e = magnitude >> F8_MANTISSA;
    let m = magnitude & ((1u << F8_MANTISSA) - 1u);
    // The sign goes into a NaN too: a NaN computed from the pattern, never a constant one
    // (WGSL refuses a constant expression whose value is not finite).
    let sign = (b & 0x80u) << 24u;
    var nan = magnitude == 0x7fu; // float8e4m3fn's
    if (F8_FNUZ) {
        nan = b == 0x80u;
    } else if (F8_INFINITY) {
        // float8e5m2's top exponent: infinity, or NaN.
        if (e == (0x7fu >> F8_MANTISSA)) {
            return bitcast<f32>(sign | select(F8_QUIET_NAN, 0x7f800000u, m == 0u));
        }
        nan = false;
    }
    if (nan) {
        return bitcast<f32>(sign | F8_QUIET_NAN);
    }
    var v: f32;
    if (e == 0u) {
        // Zero or subnormal: m * 2^(1 - bias - mantissa bits), exact in f32.
        v = f32(m) * bitcast<f32>((128u - F8_BIAS - F8_MANTISSA) << 23u);
    } else {
        v = bitcast<f32>(((e + 127u - F8_BIAS) << 23u) | (m << (23u - F8_MANTISSA)));
    }
    return select(v, -v, sign != 0u);
}

fn from_f32(v: f32) -> u32 {
    let x = bitcast<u32>(v);
    if ((x & 0x7fffffffu) > 0x7f800000u) {
        return F8_NAN;
    }
    let sign = (x >> 24u) & 0x80u;
    let a = bitcast<f32>(x & 0x7fffffffu);
    if (a > F8_BOUNDARY || (a == F8_BOUNDARY && !F8_MAX_KEEPS_TIE)) {
        return select(F8_NAN, 0x7cu | sign, F8_INFINITY);
    }
    // The exponent of a's spacing: its own where it is a normal value of the type, else the
    // subnormals'. a times 2^(mantissa bits - e) is exact (a power of two, no f32 subnormal:
    // a sum of float8 values is 0 or at least 2^-17), and `round` takes ties to the even integer,
    // which is the even pattern: r is the pattern's mantissa with the implicit bit (2^M where a
    // rounds up into the next binade, the pattern's carry into its exponent).
    let e = max(i32((x >> 23u) & 0xffu) - 127, 1 - i32(F8_BIAS));
    let r = u32(round(a * bitcast<f32>(u32(i32(F8_MANTISSA) - e + 127) << 23u)));
    // (An fnuz type's 0x80 is its NaN, not -0: no sum of its values is -0.0, which only
    // -0 + -0 gives, nor rounds to zero, being a multiple of its least subnormal.)
    return ((u32(e + i32(F8_BIAS) - 1) << F8_MANTISSA) + r) | sign;
}
