// Rows along the axes below `first` (1, or 2 where axis 0 is a whole unpadded run): shared by
// the row walks of narrow_rows.wgsl and rows16.wgsl.

// The input element (its offset in the input binding) at window-local position x of row
// `rr`, or NONE where it is the constant: rows along axis 0 (first 1) or along axes 0 and 1
// (first 2).
fn row_source(rr: Row, x: u32, first: u32) -> u32 {
    let a0 = P.axes[0];
    var s = 0u;
    var idx = 0u;
    if (first == 1u) {
        s = source_coord(x + a0.start, 0u);
        idx = rr.src + (a0.crop_start + s) * a0.in_stride;
    } else {
        // Position o on axis 1, channel c of its run.
        let a1 = P.axes[1];
        let o = divide(x, a0.len_magic, a0.len_shift);
        let c = x - o * a0.len;
        s = source_coord(o + a1.start, 1u);
        idx = rr.src + (a1.crop_start + s) * a1.in_stride + (a0.crop_start + c) * a0.in_stride;
    }
    return select(NONE, idx, s != NONE && rr.inside);
}
