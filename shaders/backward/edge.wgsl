// Edge mode: the first kept index's images are the whole pad before and its own position, the
// last's its own position and the whole pad after (one element: all), the others their own.
fn list(d: u32, j: u32) -> List {
    let a = P.axes[d];
    let at = a.pad_before + j;
    let lo = select(at, 0u, j == 0u);
    let hi = select(at + 1u, a.out_len, j + 1u == a.kept);
    return List(hi - lo, at - lo, lo, 0u, 1u, 1u);
}
