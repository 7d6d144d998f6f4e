// One invocation per output word of 32, 64 or 128 bits. GRID, fixed per pipeline so that
// the compiler drops the other grids' code (uniform branches on it cost 2-3x on llvmpipe):
//   0  one axis: a flat 2-D index.
//   1  two or three axes: x is the coordinate on axis 0 (the innermost), y on axis 1, z on
//      axis 2; no division, no loop, the uniform read at constant indices only.
//   2  more axes: as 1, with z walking axes 2 and up.
//   3  rows too many for y and z: x on axis 0, rows linear over y and z.
//   4  rows longer than x holds: a flat index, split into row and x by one division.

const ELEMS: u32 = 2u;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let inner = P.axis[0];
    var x = gid.x;
    var row = 0u;
    var off = 0u;
    if (GRID == 0u) {
        x = gid.x + gid.y * nwg.x * 64u;
    } else if (GRID == 1u || GRID == 2u) {
        row = gid.z * P.axis[1].x + gid.y;
        off = axis_offset(1u, gid.y);
        var outer = 0u;
        if (GRID == 1u) {
            outer = select(0u, axis_offset(2u, gid.z), P.rank == 3u);
        } else {
            outer = row_offset(gid.z, 2u, P.rank);
        }
        if (outer == NONE) {
            off = NONE;
        } else if (off != NONE) {
            off += outer;
        }
    } else {
        if (GRID == 3u) {
            row = gid.y + gid.z * nwg.y;
        } else {
            let i = gid.x + gid.y * nwg.x * 64u;
            row = divide(i, P.div[0].x, P.div[0].y);
            x = i - row * inner.x;
        }
        if (row >= P.count) {
            return;
        }
        off = row_offset(row, 1u, P.rank);
    }
    // Grids 1-4 give each invocation ELEMS elements of its row, a grid width apart (so a
    // SIMD group's accesses stay contiguous); the row's offsets are worked out once for them.
    let step = select(nwg.x * 64u, 0u, GRID == 0u || GRID == 4u);
    let elems = select(ELEMS, 1u, GRID == 0u || GRID == 4u);
    for (var e = 0u; e < elems; e++) {
        let xe = x + e * step;
        if (xe < inner.x) {
            let k = source_coord(xe, 0u);
            var v = constant_word();
            if (k != NONE && off != NONE) {
                v = src[off + inner.w + k];
            }
            dst[row * inner.x + xe] = v;
        }
    }
}
