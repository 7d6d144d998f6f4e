// 8- and 16-bit elements (EPW to a u32 word): each output word has one invocation, so no two
// invocations write one word. Rows of whole words run on a row grid (narrow_rows); otherwise
// each invocation takes NARROW_WORD_RUN consecutive output words. The window is one contiguous run of a dense output starting
// at element P.first of the binding; a word only partly in it keeps its other bytes. The
// input may have any strides.

// The word that starts `shift` bits into input word `lo` and runs on into `hi`.
fn shifted(lo: u32, hi: u32, shift: u32) -> u32 {
    return select((lo >> shift) | (hi << ((32u - shift) & 31u)), lo, shift == 0u);
}

// Rows of whole words, so no word straddles two rows. A row has P.row_lanes invocations
// (the grid width), each writing up to NARROW_ROW_WORDS words of it: P.pack rows share a
// workgroup where they fit, and a row longer than a workgroup's words takes several. y and z
// (linear) count workgroups of rows.

// `first` is 1 (rows along axis 0) or 2 (axis 0 a whole unpadded run of channels, rows along
// axes 0 and 1), the pipeline constant ROW_FIRST, so the compiler folds the uniform indices.
fn narrow_rows(gid: vec3<u32>, nwg: vec3<u32>, first: u32) {
    let sub = divide(gid.x, P.lanes_magic, P.lanes_shift);
    let row = (gid.y + gid.z * nwg.y) * P.pack + sub;
    // Invocations past the rows write nothing: their loops below end at once. (Returning
    // here instead made every row's loop slower on lavapipe.)
    let row_words = select(0u, P.row_words, sub < P.pack && row < P.count);
    // The row's coordinate on axis `first` and position over the axes above (that axis is all
    // zeros where there is none, and row is 0).
    let af = P.axes[first];
    let z = divide(row, af.len_magic, af.len_shift);
    let r = row_at(first, row - z * af.len, z);
    let lane = gid.x - sub * P.row_lanes;
    let a0 = P.axes[0];
    let a1 = P.axes[1];
    // The row's first output element (a multiple of EPW).
    var base = r.dst + a0.start * a0.out_stride;
    if (first == 2u) {
        base += a1.start * a1.out_stride;
    }
    // Rows whose consecutive elements are consecutive in the input ("dense"): a word whose
    // elements are all kept is then at most two input words, shifted. Element x of such a row
    // is kept when d = x + d_off (wrapping) is below kept_elems, and is input element src0 + d.
    var dense = a0.in_stride == 1u;
    var d_off = a0.start - a0.pad_before;
    var kept_elems = a0.kept;
    var src0 = r.src + a0.crop_start;
    if (first == 2u) {
        dense = dense && a1.in_stride == a0.len;
        d_off = (a1.start - a1.pad_before) * a0.len;
        kept_elems = a1.kept * a0.len;
        src0 = r.src + a1.crop_start * a0.len + a0.crop_start;
    }
    // Words [f0, f1) of a dense row hold kept elements only, so they need no mode function
    // (every mode maps a kept position to itself). Found once a row, they leave the pair loop
    // below no test but its end (a test a pair, with an element loop beside it for the others,
    // took u8 [1,1024,1024,3] 1.03-1.56 x as long in 18 of 20 pairs on lavapipe; BENCHMARKS.md,
    // section 23). f1 - f0 is even, so they go in pairs; the words around them (pads, row ends)
    // go after, one by one.
    var f0 = 0u;
    var f1 = 0u;
    if (dense && r.inside) {
        // d_off is signed: below zero, the row starts in the pad before, -d_off elements of it.
        let before = d_off >= 0x80000000u;
        let first_kept = select(0u, 0u - d_off, before);
        let end_kept = min(kept_elems - select(min(d_off, kept_elems), d_off, before), row_words * EPW);
        f0 = min((first_kept + EPW - 1u) / EPW, row_words);
        f1 = max(end_kept / EPW, f0);
        f1 = f0 + ((f1 - f0) & ~1u);
    }
    // Invocations take pairs of words, a grid width apart: a shifted pair reads three input
    // words where two single words read four (lavapipe, u8 [1,1024,1024,3]: 25 % faster on a
    // quiet machine, 2-23 % in most pairs on a loaded one; BENCHMARKS.md, section 9). Lanes
    // still read and write neighbouring memory, as a real GPU wants. Word wx reads from input
    // word i0 + wx on, `shift` bits into it; an aligned row reads two input words a pair only
    // (the next may be past the input). i0 comes from word f0's first element, a real input
    // offset: src0 + d_off alone may wrap below zero, and shifting a wrapped offset is wrong
    // (native backends happened to wrap the address back; WebGPU's clamp did not).
    let i0 = ((src0 + d_off + f0 * EPW) >> EPW_LOG2) - f0;
    let shift = ((src0 + d_off) & (EPW - 1u)) * BITS;
    let third = select(1u, 2u, shift != 0u);
    for (var n = 0u; n < NARROW_ROW_WORDS / 2u; n++) {
        let wx = f0 + 2u * (lane + n * P.row_lanes);
        if (wx >= f1) {
            break;
        }
        let a = src[i0 + wx];
        let b = src[i0 + wx + 1u];
        let c = src[i0 + wx + third];
        dst[base / EPW + wx] = shifted(a, b, shift);
        dst[base / EPW + wx + 1u] = shifted(b, c, shift);
    }
    // The other words element by element, a lane each: j counts them, those before f0 first.
    let kept_words = f1 - f0;
    for (var j = lane; j + kept_words < row_words; j += P.row_lanes) {
        let wx = select(j + kept_words, j, j < f0);
        let x = wx * EPW;
        var word = 0u;
        for (var k = 0u; k < EPW; k++) {
            var v = P.constant.x & MASK;
            var s = 0u;
            var idx = 0u;
            if (first == 1u) {
                s = source_coord(x + k + a0.start, 0u);
                idx = r.src + (a0.crop_start + s) * a0.in_stride;
            } else {
                // Element x + k of the row: position o on axis 1, channel c of its run.
                let o = divide(x + k, a0.len_magic, a0.len_shift);
                let c = x + k - o * a0.len;
                s = source_coord(o + a1.start, 1u);
                idx = r.src + (a1.crop_start + s) * a1.in_stride + (a0.crop_start + c) * a0.in_stride;
            }
            if (s != NONE && r.inside) {
                v = (src[idx >> EPW_LOG2] >> ((idx & (EPW - 1u)) * BITS)) & MASK;
            }
            word |= v << (k * BITS);
        }
        dst[base / EPW + wx] = word;
    }
}

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    // ROW_FIRST is a pipeline constant: llvmpipe runs both sides of a runtime branch.
    if (ROW_FIRST != 0u) {
        narrow_rows(gid, nwg, ROW_FIRST);
        return;
    }
    // NARROW_WORD_RUN consecutive words an invocation: the row of the first is found once (a
    // division and a walk over the axes above) and then followed element by element.
    let i0 = (gid.x + gid.y * nwg.x * WORKGROUP) * NARROW_WORD_RUN;
    if (i0 >= P.count) {
        return;
    }
    let inner = P.axes[0];
    // The first word's first element in the window (the window may start mid-word).
    let first_e = select(0u, i0 * EPW - P.first % EPW, i0 > 0u);
    var row = divide(first_e, inner.len_magic, inner.len_shift);
    var x = first_e - row * inner.len;
    var r = row_offsets(row);
    let words = min(NARROW_WORD_RUN, P.count - i0);
    for (var n = 0u; n < words; n++) {
        let w = P.first / EPW + i0 + n;
        // Byte k of the word is window element e0 + k (wrapping below the window's start);
        // (row, x) is element e0 + k0's.
        let e0 = w * EPW - P.first;
        let k0 = select(0u, P.first - w * EPW, w * EPW < P.first);
        var word = 0u;
        var mask = 0u;
        // A whole word of kept elements of one dense row needs no mode function: it is at most
        // two input words, shifted. Rows of any length come here, odd image widths say
        // (lavapipe, u8 [1,3,1023,1023] padded by 1: kernel 36-54 ms element by element, 18-33
        // ms so).
        let j = x + inner.start - inner.pad_before; // wraps past kept when in the pad before
        let fast = k0 == 0u && e0 + EPW <= P.elems && x + EPW <= inner.len && r.inside && inner.in_stride == 1u
            && j < inner.kept && j + EPW - 1u < inner.kept;
        if (fast) {
            let idx = r.src + inner.crop_start + j;
            let shift = (idx & (EPW - 1u)) * BITS;
            let lo = src[idx >> EPW_LOG2];
            // An aligned word reads one input word only (the next may be past the input).
            let hi = src[(idx >> EPW_LOG2) + select(0u, 1u, shift != 0u)];
            word = shifted(lo, hi, shift);
            mask = 0xffffffffu;
            x += EPW;
            if (x == inner.len) {
                x = 0u;
                row += 1u;
                r = row_offsets(row);
            }
        }
        // The other words element by element; for a SIMD group of fast words this loop runs
        // no iteration (see narrow_rows).
        for (var k = select(k0, EPW, fast); k < EPW; k++) {
            if (e0 + k >= P.elems) {
                break;
            }
            let s = source_coord(x + inner.start, 0u);
            var v = P.constant.x & MASK;
            if (s != NONE && r.inside) {
                let idx = r.src + (inner.crop_start + s) * inner.in_stride;
                v = (src[idx >> EPW_LOG2] >> ((idx & (EPW - 1u)) * BITS)) & MASK;
            }
            word |= v << (k * BITS);
            mask |= MASK << (k * BITS);
            x += 1u;
            if (x == inner.len) {
                x = 0u;
                row += 1u;
                r = row_offsets(row);
            }
        }
        if (mask == 0xffffffffu) {
            dst[w] = word;
        } else {
            dst[w] = (dst[w] & ~mask) | word;
        }
    }
}
