// One invocation per output u32 word for 8- and 16-bit elements (EPW elements per word), so
// no two invocations write one word. A last partial word keeps the bytes beyond the output.
// GRID, fixed per pipeline: 0 one axis, 1 two axes, 2 three, 3 more (walked by a loop);
// 10 and up, word-aligned rows (see narrow_rows).

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

// Rows of whole words: x is the word within the row, y and z the row, so nothing is divided
// per row and no word straddles two rows. A row runs along the padded axis p with c
// elements per position: with CHUNKED, axis 0 is an unpadded run of c elements (the
// channels of a pixel, say) and p is axis 1; otherwise p is axis 0 and c is 1. UP counts
// the axes above p (3: three or more). P.count holds the rows, P.out_elems words per row.
const CHUNKED: bool = GRID >= 14u;
const UP: u32 = (GRID - 10u) % 4u;
const ROW_WORDS: u32 = 2u;

fn narrow_rows(gid: vec3<u32>, nwg: vec3<u32>) {
    let row = gid.y + gid.z * nwg.y;
    if (row >= P.count) {
        return;
    }
    let p = select(0u, 1u, CHUNKED);
    var off = 0u;
    if (UP == 1u) {
        off = axis_offset(p + 1u, row);
    } else if (UP == 2u) {
        let q = P.div[p + 1u];
        let outer = divide(row, q.x, q.y);
        let a = axis_offset(p + 1u, row - outer * P.axis[p + 1u].x);
        let b = axis_offset(p + 2u, outer);
        off = select(a + b, NONE, a == NONE || b == NONE);
    } else if (UP == 3u) {
        off = row_offset(row, p + 1u, P.rank);
    }
    let a = P.axis[p];
    let stride = P.div[p].z;
    // ROW_WORDS words of the row per invocation, a grid width apart, sharing the row's offset.
    for (var r = 0u; r < ROW_WORDS; r++) {
        let wx = gid.x + r * nwg.x * 64u;
        if (wx < P.out_elems) {
            // Element x0 of the row is position o on axis p, element e of its run.
            let x0 = wx * EPW;
            var o = x0;
            var e = 0u;
            var c = 1u;
            if (CHUNKED) {
                c = P.axis[0].x;
                o = divide(x0, P.div[0].x, P.div[0].y);
                e = x0 - o * c;
            }
            var word = 0u;
            for (var k = 0u; k < EPW; k++) {
                let s = source_coord(o, p);
                var v = P.constant.x & MASK;
                if (s != NONE && off != NONE) {
                    let i = off + (a.w + s) * stride + e;
                    v = (src[i >> EPW_LOG2] >> ((i & (EPW - 1u)) * BITS)) & MASK;
                }
                word |= v << (k * BITS);
                e += 1u;
                let next = e == c;
                o += select(0u, 1u, next);
                e = select(e, 0u, next);
            }
            dst[row * P.out_elems + wx] = word;
        }
    }
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    if (GRID >= 10u) {
        narrow_rows(gid, nwg);
        return;
    }
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
