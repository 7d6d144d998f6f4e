// The pad's gradient (src/gpu/backward/), a gather: each element of grad_in (the dispatch's
// output, dst) the sum of grad_out (src) over the output positions that read it, in the order
// src/adjoint.rs documents: axis by axis, the last innermost; an untouched axis takes no sum;
// each touched axis's images added from +0.0 (pad before ascending, pad after ascending, the
// kept one last), a sum of more than a block's terms in blocks, the blocks' sums in order.
// Sums are held as f32 and rounded to the element's type at every addition (`add_in_type`,
// with `load_src` and `store_dst`: the element's prelude, src/gpu/kernels/gradient.rs); P is a
// BackParams, its axes outermost first. The mode's `list` (appended after this file) says, for
// kept index j of axis d, where its images are.
//
// SPLIT (a pipeline constant): a workgroup for the elements whose sum over axis P.split_axis
// has several terms, spread over its lanes, in blocks (past BLOCK terms) or term by term (the
// nests inside each term long: an edge pad of 100 on two axes), the blocks' sums then added in
// order (a sum of up to BLOCK terms is the same bits added from +0.0 one by one or as blocks of
// one); every other element a lane, every sum in order on it. A workgroup takes WORKGROUP
// elements either way. WORDS (8- and 16-bit elements, the gradient-words variant): a lane a
// u32 word of grad_in's elements (`word_on_lane`, the element's prelude).
//
// LEAN (one level at most: the border boxes where one axis has sums, src/gpu/backward/bulk.rs,
// and plans with one such axis; never in parts, src/gpu/backward/windows.rs): the same sums
// without the general walk or the parts. A CPU-based device pays, for every element, for each
// branch and loop it could reach, taken or not (on lavapipe the borders' time more than halved).
const LEAN: bool = MAX_LEVELS == 1u;

// An axis's images of one kept index, ascending: the a-th is residue s0 or s1 (a % c) plus
// (a / c) periods; `count` of them, the kept one the `kept_at`-th.
struct List {
    count: u32,
    kept_at: u32,
    s0: u32,
    s1: u32,
    c: u32,
    period: u32,
}

// The t-th image in the order of the sums: the ascending ones before the kept one, those
// after it, the kept one last.
fn image(l: List, t: u32) -> u32 {
    var a = t;
    if (t + 1u == l.count) {
        a = l.kept_at;
    } else if (t >= l.kept_at) {
        a = t + 1u;
    }
    return ascending(l, a);
}

// The a-th image in ascending order.
fn ascending(l: List, a: u32) -> u32 {
    let two = l.c == 2u;
    return select(l.s0, l.s1, two && (a & 1u) == 1u) + select(a, a >> 1u, two) * l.period;
}

// How many of the images lie below output position x.
fn images_below(l: List, x: u32) -> u32 {
    var lo = 0u;
    var hi = l.count;
    while (lo < hi) {
        let mid = (lo + hi) >> 1u;
        if (ascending(l, mid) < x) {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// The images at output positions [P.part_lo, P.part_hi), ascending: a run of them from the
// lo-th (where it is odd, the two residues trade places). A part is of the pads' positions or
// of the kept ones, where an index has one image, so ascending is the order of the sums.
fn part_of(l: List) -> List {
    let lo = images_below(l, P.part_lo);
    let n = images_below(l, P.part_hi) - lo;
    let kept_at = n - 1u;
    if (l.c == 1u) {
        return List(n, kept_at, l.s0 + lo * l.period, 0u, 1u, l.period);
    }
    let laps = lo >> 1u;
    if ((lo & 1u) == 0u) {
        return List(n, kept_at, l.s0 + laps * l.period, l.s1 + laps * l.period, 2u, l.period);
    }
    return List(n, kept_at, l.s1 + laps * l.period, l.s0 + (laps + 1u) * l.period, 2u, l.period);
}

// Terms a block of a sum of n terms holds (src/adjoint.rs's block_len).
fn block_len(n: u32) -> u32 {
    return max((n + MAX_BLOCKS - 1u) / MAX_BLOCKS, BLOCK);
}

// The element's levels: its touched axes with more than one image, outermost first (an axis
// of one image passes its one term on: a sum of several from +0.0 is never -0.0, and the NaN
// rule quiets what it keeps, so its bits are the same either way). MAX_LEVELS: the plan's
// axes with several images, rounded up to a power of two (private arrays sized for 16 axes
// cost every element their upkeep: on lavapipe 2-3x the borders' time).
var<private> lists: array<List, MAX_LEVELS>;
var<private> strides: array<u32, MAX_LEVELS>;
var<private> axis_of: array<u32, MAX_LEVELS>;
var<private> levels: u32;
// Whether the element's sum is one term in all (one image on every touched axis, counted
// before a part is cut): that term's bits are the element's, as src/adjoint.rs's ordered_sum
// keeps them.
var<private> one_term: bool;

// An odometer over levels [first, last): each level's image t, the sums of its finished
// blocks (total) and of its open one (block), the terms in that block, and the offset of the
// position through it (at).
struct Odometer {
    t: array<u32, MAX_LEVELS>,
    total: array<f32, MAX_LEVELS>,
    block: array<f32, MAX_LEVELS>,
    in_block: array<u32, MAX_LEVELS>,
    at: array<u32, MAX_LEVELS>,
}

// Positions through levels [moved, last), from the offset through level moved - 1 (base where
// moved is first).
fn walk_levels(o: ptr<function, Odometer>, moved: u32, first: u32, last: u32, base: u32) {
    for (var l = moved; l < last; l++) {
        let outside = select((*o).at[max(l, 1u) - 1u], base, l == first);
        (*o).at[l] = outside + image(lists[l], (*o).t[l]) * strides[l];
    }
}

fn start(o: ptr<function, Odometer>, first: u32, last: u32, base: u32) {
    for (var l = first; l < last; l++) {
        (*o).t[l] = 0u;
        (*o).total[l] = 0.0;
        (*o).block[l] = 0.0;
        (*o).in_block[l] = 0u;
    }
    walk_levels(o, first, first, last, base);
}

// Adds `term` at level last - 1, each finished level's sum joining the one outside it; returns
// the level whose image moved (positions from it are walked again), or `last` where level
// `first` finished (its sum in total[first]).
fn add(o: ptr<function, Odometer>, first: u32, last: u32, term_in: f32) -> u32 {
    var term = term_in;
    var l = last - 1u;
    loop {
        (*o).block[l] = add_in_type((*o).block[l], term);
        (*o).in_block[l] += 1u;
        (*o).t[l] += 1u;
        let n = lists[l].count;
        if ((*o).in_block[l] == block_len(n) || (*o).t[l] == n) {
            (*o).total[l] = add_in_type((*o).total[l], (*o).block[l]);
            (*o).block[l] = 0.0;
            (*o).in_block[l] = 0u;
        }
        if ((*o).t[l] < n) {
            return l;
        }
        if (l == first) {
            return last;
        }
        term = (*o).total[l];
        (*o).t[l] = 0u;
        (*o).total[l] = 0.0;
        l -= 1u;
    }
    return last;
}

// The sum over levels [first, levels) of grad_out, from offset `base` through the levels
// outside them.
fn nest(first: u32, base: u32) -> f32 {
    if (first == levels) {
        return load_src(base);
    }
    if (LEAN || first + 1u == levels) {
        return one_level(lists[first], strides[first], base);
    }
    var o: Odometer;
    start(&o, first, levels, base);
    loop {
        let moved = add(&o, first, levels, load_src(o.at[levels - 1u]));
        if (moved == levels) {
            return o.total[first];
        }
        walk_levels(&o, moved, first, levels, base);
    }
    return 0.0;
}

// The odometer's sum over one level (its state in registers): most elements with a sum have one.
fn one_level(l: List, stride: u32, base: u32) -> f32 {
    let n = l.count;
    let b = block_len(n);
    var total = 0.0;
    var block = 0.0;
    var in_block = 0u;
    for (var t = 0u; t < n; t++) {
        block = add_in_type(block, load_src(base + image(l, t) * stride));
        in_block += 1u;
        if (in_block == b || t + 1u == n) {
            total = add_in_type(total, block);
            block = 0.0;
            in_block = 0u;
        }
    }
    return total;
}

// One addition of a sum, under the one NaN rule the CPU path's `add_f32` keeps too, so that
// both give the same bits: a NaN operand is kept, the sum so far first, with its quiet bit
// set; a NaN the addition makes (infinities of both signs) is the positive quiet NaN,
// whatever the device's own. Written on the bits: WGSL lets a compiler assume no NaN in float arithmetic.
fn add_f32(a: f32, b: f32) -> f32 {
    let x = bitcast<u32>(a);
    let y = bitcast<u32>(b);
    if (is_nan(x)) {
        return bitcast<f32>(x | 0x00400000u);
    }
    if (is_nan(y)) {
        return bitcast<f32>(y | 0x00400000u);
    }
    let sum = bitcast<u32>(a + b);
    // 0x7fc00000 from a value, not a constant (Chromium refuses a constant NaN).
    return bitcast<f32>(select(sum, (sum & 0x7fc00000u) | 0x7fc00000u, is_nan(sum)));
}

fn is_nan(bits: u32) -> bool {
    return (bits & 0x7fffffffu) > 0x7f800000u;
}

// SPLIT: level s's blocks (a term each up to BLOCK terms), the lanes taking them in turn, each
// the sum over its images of the nest inside it, then added in order by every lane alike.
var<workgroup> block_sums: array<f32, BLOCK>;
// SPLIT: the walk's decisions, lane 0's, read back uniform.
var<workgroup> decision: vec4<u32>;

fn split_sum(s: u32, base: u32, lid: u32, carried: f32) -> f32 {
    block_parts(s, base, lid);
    workgroupBarrier();
    let sum = sum_blocks(s, carried);
    workgroupBarrier();
    return sum;
}

// Terms a block of level s's split sum holds: src/adjoint.rs's blocks past BLOCK terms, else one.
fn split_block_len(n: u32) -> u32 {
    return select(1u, block_len(n), n > BLOCK);
}

// This lane's blocks of level s (lid, lid + WORKGROUP, ...): each the nest inside it over the
// block's images, in order from +0.0. (Loops whose trip counts differ between lanes live in
// functions of their own: after such a loop a caller's control flow would count as
// non-uniform, and the barriers need it uniform.)
fn block_parts(s: u32, base: u32, lid: u32) {
    let n = lists[s].count;
    let b = split_block_len(n);
    for (var k = lid; k * b < n; k += WORKGROUP) {
        var part = 0.0;
        for (var t = k * b; t < min(k * b + b, n); t++) {
            part = add_in_type(part, nest(s + 1u, base + image(lists[s], t) * strides[s]));
        }
        block_sums[k] = part;
    }
}

// The blocks' sums of level s, in order from `carried` (+0.0 but in a part: what the parts
// before stored).
fn sum_blocks(s: u32, carried: f32) -> f32 {
    let n = lists[s].count;
    let b = split_block_len(n);
    var sum = carried;
    for (var i = 0u; i < (n + b - 1u) / b; i++) {
        sum = add_in_type(sum, block_sums[i]);
    }
    return sum;
}

// The level of the element's split axis (`levels` where that axis has one image here).
fn split_level() -> u32 {
    var s = levels;
    for (var l = 0u; l < levels; l++) {
        if (axis_of[l] == P.split_axis) {
            s = l;
        }
    }
    return s;
}

// The rank as loops read it: P.rank plus a zero no compiler can see through (the grid's z
// coordinate: every grid this crate makes is one deep, src/gpu/checks.rs). Lavapipe (Mesa
// 22) inlines a uniform that bounds a loop, and where that shrinks the shader enough it
// compiles the shader again at every dispatch and never frees it (tens of ms and about
// 1 MB a dispatch, examples/driver_recompiles.rs); a bound it cannot read is left alone.
var<private> grid_z: u32;

fn loop_rank() -> u32 {
    return P.rank + grid_z;
}

// The element's coordinates off its flat index; the offset of its one image on the axes
// without levels; its levels. Returns (the grad_out offset outside the levels, the grad_in
// offset, 1 where it has any touched axis, 1 where it is kept on every axis).
fn element(e: u32) -> vec4<u32> {
    if (LEAN) {
        return lean_element(e);
    }
    var rest = e;
    var k_of: array<u32, MAX_RANK>;
    var dst_at = P.in_base;
    let rank = loop_rank();
    for (var i = 0u; i < rank; i++) {
        let d = rank - 1u - i;
        let a = P.axes[d];
        var k = rest;
        if (d > 0u) {
            rest = divide(rest, a.in_magic, a.in_shift);
            k = k - rest * a.in_len;
        }
        k = past_gaps(k, d);
        k_of[d] = k;
        dst_at += k * a.in_stride;
    }
    var fixed = P.out_base;
    var touched = 0u;
    levels = 0u;
    one_term = true;
    for (var d = 0u; d < rank; d++) {
        let a = P.axes[d];
        let k = k_of[d];
        if (a.touched == 0u) {
            fixed += k * a.out_stride;
            continue;
        }
        touched = 1u;
        let j = k - a.crop_start; // wraps past kept where cropped away before
        if (j >= a.kept) {
            return vec4<u32>(0u, dst_at, 1u, 0u);
        }
        var l = list_of(d, j);
        one_term = one_term && l.count == 1u;
        if (d == P.part_axis) {
            l = part_of(l);
            if (l.count == 0u) {
                // None of its images in this part: nothing to add.
                return vec4<u32>(0u, dst_at, 1u, 0u);
            }
        }
        if (l.count == 1u) {
            fixed += image(l, 0u) * a.out_stride;
        } else {
            lists[levels] = l;
            strides[levels] = a.out_stride;
            axis_of[levels] = d;
            levels += 1u;
        }
    }
    return vec4<u32>(fixed, dst_at, touched, 1u);
}

// Index k of the window on axis d, past the window's gaps (a border's two sides in one
// dispatch, src/gpu/backward/bulk.rs): on a gap's axis, its indices from the gap on lie the
// gap's length further.
fn past_gaps(k: u32, d: u32) -> u32 {
    let first = select(0u, P.gaps.y, d == P.gap_axis && k >= P.gaps.x);
    return k + first + select(0u, P.gaps.w, d == P.gap2_axis && k >= P.gaps.z);
}

// The list of kept index j of axis d: the axis's one-image run needs no arithmetic (most
// elements with a sum have one axis in it).
fn list_of(d: u32, j: u32) -> List {
    let a = P.axes[d];
    if (j - a.run_start < a.run_len) {
        return List(1u, 0u, a.pad_before + j, 0u, 1u, 1u);
    }
    return list(d, j);
}

// LEAN: `element` for one level at most and no parts, in one pass from the innermost axis
// (no coordinates held in an array).
fn lean_element(e: u32) -> vec4<u32> {
    var rest = e;
    var dst_at = P.in_base;
    var fixed = P.out_base;
    var touched = 0u;
    var kept = 1u;
    levels = 0u;
    one_term = true;
    let rank = loop_rank();
    for (var i = 0u; i < rank; i++) {
        let d = rank - 1u - i;
        let a = P.axes[d];
        var k = rest;
        if (d > 0u) {
            rest = divide(rest, a.in_magic, a.in_shift);
            k = k - rest * a.in_len;
        }
        k = past_gaps(k, d);
        dst_at += k * a.in_stride;
        if (a.touched == 0u) {
            fixed += k * a.out_stride;
            continue;
        }
        touched = 1u;
        let j = k - a.crop_start;
        if (j >= a.kept) {
            kept = 0u;
            continue;
        }
        let l = list_of(d, j);
        one_term = one_term && l.count == 1u;
        if (l.count == 1u) {
            fixed += image(l, 0u) * a.out_stride;
        } else {
            lists[0] = l;
            strides[0] = a.out_stride;
            axis_of[0] = d;
            levels = 1u;
        }
    }
    return vec4<u32>(fixed, dst_at, touched, kept);
}

@compute @workgroup_size(WORKGROUP)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    grid_z = gid.z;
    if (SPLIT) {
        elements_of_workgroup(wid.x + wid.y * nwg.x, lid);
    } else if (WORDS) {
        word_on_lane(gid.x + gid.y * nwg.x * WORKGROUP);
    } else {
        element_on_lane(gid.x + gid.y * nwg.x * WORKGROUP);
    }
}

// SPLIT: the workgroup's elements whose split axis has several images here, queued (their
// order does not matter: each one's sum is the same bits whoever takes it).
var<workgroup> queue: array<u32, WORKGROUP>;
var<workgroup> queued: atomic<u32>;
// Their count, and the one the lanes take now (lane 0's, read back uniform).
var<workgroup> queue_len: u32;
var<workgroup> current: u32;

// SPLIT: a workgroup takes WORKGROUP elements, as a lane each where the split axis has one
// image (most of them: no long sum), then the queued ones one after another, all lanes on each.
fn elements_of_workgroup(w: u32, lid: u32) {
    if (lid == 0u) {
        atomicStore(&queued, 0u);
    }
    workgroupBarrier();
    own_element(w * WORKGROUP + lid);
    workgroupBarrier();
    if (lid == 0u) {
        queue_len = atomicLoad(&queued);
    }
    let n = workgroupUniformLoad(&queue_len);
    for (var i = 0u; i < n; i++) {
        // Read back uniform as the walk's decisions are (lane 0's, then every lane's).
        if (lid == 0u) {
            current = queue[i];
        }
        element_on_workgroup(workgroupUniformLoad(&current), lid);
    }
}

// SPLIT: this lane's element, on the lane where its split axis has one image, else queued.
fn own_element(e: u32) {
    if (e >= P.count) {
        return;
    }
    let at = element(e);
    if (split_level() == levels) {
        finish_on_lane(at);
    } else {
        queue[atomicAdd(&queued, 1u)] = e;
    }
}

// A lane an element: every sum in order on it.
fn element_on_lane(e: u32) {
    if (e >= P.count) {
        return;
    }
    finish_on_lane(element(e));
}

// The element whose `element` is `at`, on this lane.
fn finish_on_lane(at: vec4<u32>) {
    if (at.z == 0u || (at.w == 1u && one_term)) {
        // A sum of one term (in the part that holds it): the element is its one image, bits
        // and all.
        copy_element(at.y, at.x);
        return;
    }
    if (!LEAN && P.part_axis != NO_PART) {
        part_on_lane(at);
        return;
    }
    var v = 0.0;
    if (at.w == 1u) {
        v = nest(0u, at.x);
    }
    store_dst(at.y, v);
}

// One part of the element's sum (a lane an element): its part axis, the outermost touched
// one, is its first level or has one image here; its terms in this part added in order to
// +0.0 (the first part) or to the sum the parts before stored, the order and the bits of one
// sum of up to a block's terms.
// Elements with nothing here are left alone.
fn part_on_lane(at: vec4<u32>) {
    if (P.part_continues == 1u && at.w == 0u) {
        return;
    }
    var v = 0.0;
    if (P.part_continues == 1u) {
        v = load_dst(at.y);
    }
    if (at.w == 1u && levels > 0u && axis_of[0] == P.part_axis) {
        v = first_level_from(v, at.x);
    } else if (at.w == 1u) {
        v = add_in_type(v, nest(0u, at.x));
    }
    store_dst(at.y, v);
}

// The first level's terms (each the nest inside it, from `base`) added in order to `carried`.
fn first_level_from(carried: f32, base: u32) -> f32 {
    var v = carried;
    for (var t = 0u; t < lists[0].count; t++) {
        v = add_in_type(v, nest(1u, base + image(lists[0], t) * strides[0]));
    }
    return v;
}

// A workgroup an element: every lane walks the levels outside the split one alike, each
// decision on the walk read back through workgroupUniformLoad (what the lanes keep in
// private memory a compiler cannot prove uniform, and the barriers need it so).
fn element_on_workgroup(e: u32, lid: u32) {
    if (e >= P.count) {
        return;
    }
    let at = element(e);
    let s = split_level();
    if (lid == 0u) {
        decision = vec4<u32>(at.w, s, levels, select(0u, 1u, levels > 0u && axis_of[0] == P.part_axis));
    }
    let uniform = workgroupUniformLoad(&decision);
    let split = uniform.y;
    // A part of the sums (as part_on_lane's): nothing here leaves the element alone; else it
    // continues from what the parts before stored (lane 0's, the lane that stores).
    let parted = P.part_axis != NO_PART;
    if (parted && P.part_continues == 1u && uniform.x == 0u) {
        return;
    }
    var carried = 0.0;
    if (parted && P.part_continues == 1u && lid == 0u) {
        carried = load_dst(at.y);
    }
    // Where the part axis is the first level its terms are added to `carried` in order; where
    // it has one image here, the sum inside it is one term added to it.
    let first_is_part = parted && uniform.w == 1u;
    let onto = select(0.0, carried, first_is_part);
    var v = 0.0;
    if (uniform.x == 1u && split == uniform.z && first_is_part) {
        v = first_level_from(carried, at.x);
    } else if (uniform.x == 1u && split == uniform.z) {
        // Its split axis has one image here: no long sum.
        v = nest(0u, at.x);
    } else if (uniform.x == 1u && split == 0u) {
        v = split_sum(0u, at.x, lid, onto);
    } else if (uniform.x == 1u) {
        v = outer_sum(split, at.x, lid, onto);
    }
    if (uniform.x == 1u && parted && !first_is_part) {
        v = add_in_type(carried, v);
    }
    if (lid == 0u && (at.z == 0u || (at.w == 1u && one_term))) {
        copy_element(at.y, at.x);
    } else if (lid == 0u) {
        store_dst(at.y, v);
    }
}

// The levels outside split level s, every lane alike, each term a split sum; the first
// level's sum from `carried` (+0.0 but in a part, whose first level holds at most a block).
fn outer_sum(s: u32, base: u32, lid: u32, carried: f32) -> f32 {
    var o: Odometer;
    start(&o, 0u, s, base);
    o.block[0] = carried;
    loop {
        let moved = add(&o, 0u, s, split_sum(s, o.at[s - 1u], lid, 0.0));
        if (lid == 0u) {
            decision.x = moved;
        }
        if (workgroupUniformLoad(&decision).x == s) {
            break;
        }
        walk_levels(&o, moved, 0u, s, base);
    }
    return o.total[0];
}
