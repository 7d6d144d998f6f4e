// Long rows' kept words [f0, f1) of narrow_rows.wgsl in the narrow-spread variant: a row has
// whole workgroups (P.row_lanes lanes), a lane a word, two an iteration a grid width apart, so
// that every load and store instruction of a SIMD group covers neighbouring words; returns f1.
// An aligned row (shift 0) reads one input word a word: the next may be past the input.
fn long_row_kept(f0: u32, f1: u32, i0: u32, shift: u32, lane: u32, inside: bool) -> u32 {
    let step = P.row_lanes;
    for (var n = 0u; n < NARROW_ROW_WORDS / 2u; n++) {
        let w = f0 + lane + 2u * n * step;
        if (w >= f1) {
            break;
        }
        let v = w + step;
        let more = v < f1;
        var lo = constant_word();
        var hi = lo;
        if (inside) {
            let a = load_src(i0 + w);
            var b = a;
            var c = 0u;
            var d = 0u;
            if (more) {
                c = load_src(i0 + v);
                d = c;
            }
            if (shift != 0u) {
                b = load_src(i0 + w + 1u);
                if (more) {
                    d = load_src(i0 + v + 1u);
                }
            }
            lo = shifted(a, b, shift);
            hi = shifted(c, d, shift);
        }
        store_dst(w, lo);
        if (more) {
            store_dst(v, hi);
        }
    }
    return f1;
}
