// One invocation per output u32 word for 8- and 16-bit elements (EPW elements per word), so no
// two invocations write one word. A last partial word keeps the bytes beyond the output.

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let w = gid.x + gid.y * nwg.x * 64u;
    if (w >= P.count) {
        return;
    }
    let r = P.rank;
    let inner = P.axis[r - 1u];
    let e0 = w * EPW;
    var x = e0 % inner.x;
    var row = e0 / inner.x;
    var off = row_offset(row, 0u, r - 1u);
    var word = 0u;
    var mask = 0u;
    for (var k = 0u; k < EPW; k++) {
        if (e0 + k >= P.out_elems) {
            break;
        }
        let s = source_coord(x, inner.y, inner.z);
        var v = P.constant.x & MASK;
        if (s != NONE && off != NONE) {
            let i = off + inner.w + s;
            v = (src[i / EPW] >> ((i % EPW) * BITS)) & MASK;
        }
        word |= v << (k * BITS);
        mask |= MASK << (k * BITS);
        x += 1u;
        if (x == inner.x) {
            x = 0u;
            row += 1u;
            off = row_offset(row, 0u, r - 1u);
        }
    }
    if (mask == 0xffffffffu) {
        dst[w] = word;
    } else {
        dst[w] = (dst[w] & ~mask) | word;
    }
}
