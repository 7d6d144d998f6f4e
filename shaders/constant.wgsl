// Constant mode: output coordinate o on an axis with `p` pads before and `n` kept elements
// maps to kept index o - p, or to the constant (NONE) outside the kept range.
fn source_coord(o: u32, p: u32, n: u32) -> u32 {
    let j = o - p; // wraps past n when o < p
    if (j < n) {
        return j;
    }
    return NONE;
}
