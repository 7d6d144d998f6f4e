// One invocation per output element of 32, 64 or 128 bits. x walks the innermost axis (with a
// grid stride past the dispatch limit); y and z pick the row, so rank-3 plans divide by nothing.

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let r = P.rank;
    let inner = P.axis[r - 1u];
    var row = 0u;
    var off = 0u;
    if (P.grid == 1u) {
        let m = P.axis[r - 2u].x;
        row = gid.z * m + gid.y;
        off = axis_offset(r - 2u, gid.y);
        let outer = row_offset(gid.z, 0u, r - 2u);
        if (off == NONE || outer == NONE) {
            off = NONE;
        } else {
            off += outer;
        }
    } else if (P.grid == 2u) {
        row = gid.y + gid.z * nwg.y;
        if (row >= P.count) {
            return;
        }
        off = row_offset(row, 0u, r - 1u);
    }
    let base = row * inner.x;
    let step = nwg.x * 64u;
    for (var x = gid.x; x < inner.x; x += step) {
        let k = source_coord(x, inner.y, inner.z);
        var v = constant_word();
        if (k != NONE && off != NONE) {
            v = src[off + inner.w + k];
        }
        dst[base + x] = v;
    }
}
