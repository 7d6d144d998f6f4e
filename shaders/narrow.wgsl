// One invocation per output u32 word for 8- and 16-bit elements (EPW elements per word), so
// no two invocations write one word. A last partial word keeps the bytes beyond the output.
// GRID, fixed per pipeline: 0 one axis, 1 two axes, 2 three, 3 more (walked by a loop).

fn narrow_row_offset(row: u32) -> u32 {
    if (GRID == 0u) {
        return 0u;
    } else if (GRID == 1u) {
        return axis_offset(1u, row);
    } else if (GRID == 2u) {
        let q = P.div[1];
        let outer = divide(row, q.x, q.y);
        let a = axis_offset(1u, row - outer * P.axis[1].x);
        let b = axis_offset(2u, outer);
        return select(a + b, NONE, a == NONE || b == NONE);
    }
    return row_offset(row, 1u, P.rank);
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let w = gid.x + gid.y * nwg.x * 64u;
    if (w >= P.count) {
        return;
    }
    let inner = P.axis[0];
    let e0 = w * EPW;
    var row = divide(e0, P.div[0].x, P.div[0].y);
    var x = e0 - row * inner.x;
    var off = narrow_row_offset(row);
    var word = 0u;
    var mask = 0u;
    for (var k = 0u; k < EPW; k++) {
        if (e0 + k >= P.out_elems) {
            break;
        }
        let s = source_coord(x, 0u);
        var v = P.constant.x & MASK;
        if (s != NONE && off != NONE) {
            let i = off + inner.w + s;
            v = (src[i >> EPW_LOG2] >> ((i & (EPW - 1u)) * BITS)) & MASK;
        }
        word |= v << (k * BITS);
        mask |= MASK << (k * BITS);
        x += 1u;
        if (x == inner.x) {
            x = 0u;
            row += 1u;
            off = narrow_row_offset(row);
        }
    }
    if (mask == 0xffffffffu) {
        dst[w] = word;
    } else {
        dst[w] = (dst[w] & ~mask) | word;
    }
}
