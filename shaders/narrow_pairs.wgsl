// Long rows' kept words [f0, f1) of narrow_rows.wgsl (the default): a lane two neighbouring
// kept words at a time, pairs a row's lanes apart (P.row_lanes), an odd last one left to the
// row's other words; returns where the pairs end. A shifted pair reads three input words where
// two single words read four; an aligned row (shift 0) two, as the next may be past the input.
fn long_row_kept(f0: u32, f1: u32, i0: u32, shift: u32, lane: u32, inside: bool) -> u32 {
    let kept_end = f0 + ((f1 - f0) & ~1u);
    let step = P.row_lanes;
    let third = select(1u, 2u, shift != 0u);
    for (var n = 0u; n < NARROW_ROW_WORDS / 2u; n++) {
        let w = f0 + 2u * (lane + n * step);
        if (w >= kept_end) {
            break;
        }
        var lo = constant_word();
        var hi = lo;
        if (inside) {
            let a = load_src(i0 + w);
            let b = load_src(i0 + w + 1u);
            let c = load_src(i0 + w + third);
            lo = shifted(a, b, shift);
            hi = shifted(b, c, shift);
        }
        store_dst(w, lo);
        store_dst(w + 1u, hi);
    }
    return kept_end;
}
