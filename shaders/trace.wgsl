// The memory model's trace (src/gpu/model.rs), prepended to a pipeline only by the model's
// tool: every access of the traced workgroups is recorded, in program order.
// trace_buf: [0] M, the dispatch's workgroups; [1] R, records an invocation holds;
// [2, 2 + M) the slot of each workgroup (linear id), 0xffffffff where it is not traced; then
// per slot and local invocation index: a count, and R records of two words,
// (site | kind << 16, byte address in the binding).
@group(0) @binding(3) var<storage, read_write> trace_buf: array<u32>;
var<private> trace_at: u32 = 0xffffffffu;
var<private> trace_n: u32 = 0u;

fn trace_begin(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) {
    let wg = wid.x + nwg.x * (wid.y + nwg.y * wid.z);
    if (wg < trace_buf[0]) {
        let slot = trace_buf[2u + wg];
        if (slot != 0xffffffffu) {
            trace_at = 2u + trace_buf[0] + (slot * WORKGROUP + lid) * (1u + 2u * trace_buf[1]);
        }
    }
}

fn trace_access(site: u32, kind: u32, address: u32) {
    if (trace_at == 0xffffffffu) {
        return;
    }
    if (trace_n < trace_buf[1]) {
        trace_buf[trace_at + 1u + 2u * trace_n] = site | (kind << 16u);
        trace_buf[trace_at + 2u + 2u * trace_n] = address;
    }
    trace_n += 1u;
    trace_buf[trace_at] = trace_n;
}
