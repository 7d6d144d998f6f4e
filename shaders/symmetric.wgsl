// Symmetric mode: mirror repeating the edge, period 2n.
fn source_coord(o: u32, p: u32, n: u32) -> u32 {
    let j = o - p;
    if (j < n) {
        return j;
    }
    let period = 2u * n;
    var k: u32;
    if (o >= p) {
        k = j % period;
    } else {
        let back = (p - o) % period;
        k = select(period - back, 0u, back == 0u);
    }
    return select(period - 1u - k, k, k < n);
}
