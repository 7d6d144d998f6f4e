// Wrap, reflect and symmetric: a kept index's images are every position congruent to its own
// modulo the period, and (reflect, symmetric: MIRROR 1, 2) to its mirror image's.
fn period_rem(x: u32, a: BackAxis) -> u32 {
    return x - divide(x, a.period_magic, a.period_shift) * a.period;
}

// How many positions below `end` are congruent to residue r.
fn below(r: u32, end: u32, a: BackAxis) -> u32 {
    if (r >= end) {
        return 0u;
    }
    return divide(end - r + a.period - 1u, a.period_magic, a.period_shift);
}

fn list(d: u32, j: u32) -> List {
    let a = P.axes[d];
    let at = a.pad_before + j;
    var r0 = period_rem(at, a);
    var r1 = r0;
    var c = 1u;
    if (MIRROR != 0u) {
        // Reflect's mirror of j is period - j, symmetric's period - 1 - j.
        let m = select(a.period - 1u - j, a.period - j, MIRROR == 1u);
        let r = period_rem(a.pad_before + m, a);
        if (r != r0) {
            c = 2u;
            r1 = max(r0, r);
            r0 = min(r0, r);
        }
    }
    let two = select(0u, 1u, c == 2u);
    let count = below(r0, a.out_len, a) + two * below(r1, a.out_len, a);
    let kept_at = below(r0, at, a) + two * below(r1, at, a);
    return List(count, kept_at, r0, r1, c, a.period);
}
