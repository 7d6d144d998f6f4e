// Constant mode: output coordinate o on axis d maps to kept index o - (pad before), or to the
// constant (NONE) outside the kept range.
fn source_coord(o: u32, d: u32) -> u32 {
    let a = P.axes[d];
    let j = o - a.pad_before; // wraps past the kept length when o < pad before
    return select(NONE, j, j < a.kept);
}
