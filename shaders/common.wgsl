// Shared by every pad shader (after access.wgsl): the walk from output coordinates to input
// offsets. The host prepends the uniform's structs, every constant the shaders share with it
// (declared from tables: PipelineKey::constants in src/gpu/shader.rs for MAX_RANK, WORKGROUP
// and the rest every kernel reads, each kernel's own in its module under src/gpu/kernels/),
// the width's WORD alias and the bindings (P, src, dst); the mode file supplies
// `source_coord`.

// The uniform's structs, AxisParams (one axis; coordinates are global, over the whole
// output, and this dispatch covers [start, start + len) of each) and Params, are declared
// once in src/gpu/params.rs (`uniform!`) and prepended with the constants.

// (o - pad before) mod period on axis d, for the periodic modes.
fn position_in_period(o: u32, d: u32) -> u32 {
    let a = P.axes[d];
    let t = o + a.period_offset;
    return t - divide(t, a.period_magic, a.period_shift) * a.period;
}

// A row's offsets in the input and output bindings. Offsets wrap (see Params), so any u32
// may be a real offset: `inside` says whether the row reads the input at all.
struct Row {
    src: u32,
    dst: u32,
    inside: bool,
}

// Row `r` moved to window-local coordinate c on axis d.
fn step(r: Row, d: u32, c: u32) -> Row {
    let a = P.axes[d];
    let o = c + a.start;
    let k = source_coord(o, d);
    return Row(r.src + (a.crop_start + k) * a.in_stride, r.dst + o * a.out_stride, r.inside && k != NONE);
}

// Row `r` moved along axes `first` and up, at window-local linear position `lin` over them;
// the outermost axis takes what is left, undivided.
fn walk(start: Row, first: u32, lin_in: u32) -> Row {
    var r = start;
    var lin = lin_in;
    for (var d = first; d < P.rank; d++) {
        var c = lin;
        if (d + 1u < P.rank) {
            let a = P.axes[d];
            lin = divide(c, a.len_magic, a.len_shift);
            c -= lin * a.len;
        }
        r = step(r, d, c);
    }
    return r;
}

// The row with window-local coordinate y on axis `first` and window-local linear position z
// over the axes above it: the grid supplies both, so common ranks divide nothing.
fn row_at(first: u32, y: u32, z: u32) -> Row {
    var r = Row(P.in_base, P.out_base, true);
    if (first < P.rank) {
        r = step(r, first, y);
    }
    if (first + 2u == P.rank) {
        // One axis above: z is its coordinate (the common case; no loop for llvmpipe to run).
        return step(r, first + 1u, z);
    }
    return walk(r, first + 1u, z);
}

// The row at window-local linear position `row` over axes 1 and up: its coordinate on axis 1
// by one division, the position over the axes above walked by row_at (no loop for common
// ranks). Axis 1 is all zeros for rank 1, where row is 0. The wide and flat kernels' rows.
fn row_of(row: u32) -> Row {
    let a1 = P.axes[1];
    let z = divide(row, a1.len_magic, a1.len_shift);
    return row_at(1u, row - z * a1.len, z);
}

// The row at window-local linear position `row` over axes 1 and up (innermost first).
fn row_offsets(row: u32) -> Row {
    return walk(Row(P.in_base, P.out_base, true), 1u, row);
}
