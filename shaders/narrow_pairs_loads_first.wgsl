// Long rows' kept words [f0, f1) of narrow_rows.wgsl in the narrow-loads-first variant: pairs
// as by default (narrow_pairs.wgsl), four at a time with all their loads before their stores,
// so that up to twelve loads are in flight a lane; returns where the pairs end.
fn long_row_kept(f0: u32, f1: u32, i0: u32, shift: u32, lane: u32, inside: bool) -> u32 {
    let kept_end = f0 + ((f1 - f0) & ~1u);
    let step = P.row_lanes;
    let third = select(1u, 2u, shift != 0u);
    let pairs = 2u * step;
    for (var n = 0u; n < NARROW_ROW_WORDS / 2u; n += 4u) {
        let w0 = f0 + 2u * (lane + n * step);
        if (w0 >= kept_end) {
            break;
        }
        let w1 = w0 + pairs;
        let w2 = w1 + pairs;
        let w3 = w2 + pairs;
        let p0 = pair_words(i0 + w0, shift, third, inside);
        var p1 = p0;
        var p2 = p0;
        var p3 = p0;
        if (w1 < kept_end) {
            p1 = pair_words(i0 + w1, shift, third, inside);
        }
        if (w2 < kept_end) {
            p2 = pair_words(i0 + w2, shift, third, inside);
        }
        if (w3 < kept_end) {
            p3 = pair_words(i0 + w3, shift, third, inside);
        }
        store_dst(w0, p0.x);
        store_dst(w0 + 1u, p0.y);
        if (w1 < kept_end) {
            store_dst(w1, p1.x);
            store_dst(w1 + 1u, p1.y);
        }
        if (w2 < kept_end) {
            store_dst(w2, p2.x);
            store_dst(w2 + 1u, p2.y);
        }
        if (w3 < kept_end) {
            store_dst(w3, p3.x);
            store_dst(w3 + 1u, p3.y);
        }
    }
    return kept_end;
}

// The two kept words of a pair starting at input word i (its third input word at i + third:
// i + 2, or i + 1 again where the row is aligned), or the constant where the row is outside.
fn pair_words(i: u32, shift: u32, third: u32, inside: bool) -> vec2<u32> {
    var p = vec2<u32>(constant_word(), constant_word());
    if (inside) {
        let a = load_src(i);
        let b = load_src(i + 1u);
        let c = load_src(i + third);
        p = vec2<u32>(shifted(a, b, shift), shifted(b, c, shift));
    }
    return p;
}
