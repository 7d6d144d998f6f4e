//! The CPU path: copies contiguous kept runs of the input, then fills each axis's pads by
//! blocks of output already written (or the constant), outermost axis last.
//!
//! Outputs of 4 MiB and more are split across threads (`WGPU_PAD_CPU_THREADS`, default the
//! machine's parallelism).
//!
//! The recursion is written once over a `Store` (output and input access), in units of `chunk` elements (the plan's
//! unpadded trailing axes), so one code path serves every byte width, the 4-bit types
//! (unpacked to bytes, padded, repacked) and strings.

use std::thread;

use crate::dtype::ElementWidth;
use crate::error::{PadError, Result};
use crate::plan::{AxisMap, Constant, Mode, PadPlan};
use crate::tensor::{pack_nibbles, unpack_nibbles, Tensor, TensorData};

/// Outputs at least this large are split across threads.
const PARALLEL_MIN_BYTES: usize = 4 << 20;

/// Pads `input` on the CPU, allocating the output.
///
/// ```
/// use wgpu_pad::{cpu, DataType, Mode, PadPlan, PadRequest, Tensor};
/// let x = Tensor::from_slice(DataType::Int32, vec![3], &[1i32, 2, 3]).unwrap();
/// let plan = PadPlan::new(x.dtype(), x.shape(), &PadRequest::new(vec![2, 2]).mode(Mode::Reflect)).unwrap();
/// let y = cpu::pad(&plan, &x).unwrap();
/// assert_eq!(y.as_slice::<i32>().unwrap(), &[3, 2, 1, 2, 3, 2, 1]);
/// ```
pub fn pad(plan: &PadPlan, input: &Tensor) -> Result<Tensor> {
    plan.check_input(input)?;
    let out_len = plan.out_len();
    match input.data() {
        TensorData::Strings(strings) => {
            let mut out = vec![String::new(); out_len];
            let constant = match plan.constant() {
                Constant::String(s) => s.clone(),
                Constant::Bytes(_) => String::new(),
            };
            let f = plan.folded(true);
            if out_len > 0 {
                let mut store = StringStore { input: strings, out: &mut out, c: f.chunk, constant };
                run(&mut store, &f.axes, plan.mode());
            }
            Tensor::from_strings(plan.out_shape().to_vec(), out)
        }
        TensorData::Bytes(bytes) => {
            let out_bytes = plan.dtype().storage_bytes(out_len as u64).unwrap_or(0) as usize;
            let mut out = Vec::new();
            out.try_reserve_exact(out_bytes).map_err(|_| PadError::TooLarge {
                what: format!("cannot allocate {out_bytes} bytes for the output"),
            })?;
            // Every byte is written by the pad; zero-filling first costs little next to it
            // and keeps this function free of unsafe code.
            out.resize(out_bytes, 0);
            pad_bytes(plan, bytes, &mut out)?;
            Tensor::from_bytes(plan.dtype(), plan.out_shape().to_vec(), out)
        }
    }
}

/// Pads the bytes of a fixed-width or 4-bit tensor into a preallocated output of exactly
/// the output's byte size. Strings use [`pad`].
pub fn pad_into(plan: &PadPlan, input: &[u8], output: &mut [u8]) -> Result<()> {
    let (in_bytes, out_bytes) = plan.byte_sizes().ok_or_else(|| PadError::Unsupported {
        dtype: plan.dtype().name(),
        reason: "strings have no byte layout; use cpu::pad".into(),
    })?;
    if input.len() as u64 != in_bytes || output.len() as u64 != out_bytes {
        return Err(PadError::InvalidTensor {
            dtype: plan.dtype().name(),
            shape: plan.in_shape().iter().map(|&d| d as u64).collect(),
            reason: format!(
                "input of {} bytes and output of {} bytes given, the plan needs {in_bytes} and {out_bytes}",
                input.len(),
                output.len()
            ),
        });
    }
    pad_bytes(plan, input, output)
}

fn pad_bytes(plan: &PadPlan, input: &[u8], output: &mut [u8]) -> Result<()> {
    if plan.out_len() == 0 {
        return Ok(());
    }
    let constant = match plan.constant() {
        Constant::Bytes(b) => b.as_slice(),
        Constant::String(_) => &[],
    };
    if plan.dtype().width() == ElementWidth::Bits4 {
        let unpacked_in = unpack_nibbles(input, plan.in_len());
        let mut unpacked_out = vec![0u8; plan.out_len()];
        pad_fixed(plan, 1, &unpacked_in, &mut unpacked_out, &[constant[0] & 0x0f]);
        output.copy_from_slice(&pack_nibbles(&unpacked_out));
    } else {
        let width = plan.dtype().width().bytes().unwrap_or(1);
        pad_fixed(plan, width, input, output, constant);
    }
    Ok(())
}

/// Fixed-width elements of `width` bytes: the folded plan's chunks become byte runs.
fn pad_fixed(plan: &PadPlan, width: usize, input: &[u8], output: &mut [u8], constant: &[u8]) {
    let f = plan.folded(true);
    let chunk_bytes = f.chunk * width;
    let pattern: Vec<u8> = constant.iter().copied().cycle().take(chunk_bytes).collect();
    let threads = cpu_threads();
    let top = f.axes[0];
    if threads > 1 && f.axes.len() > 1 && output.len() >= PARALLEL_MIN_BYTES && top.kept >= threads {
        pad_fixed_parallel(&f.axes, plan.mode(), chunk_bytes, input, output, &pattern, threads);
    } else {
        let mut store = ByteStore { input, out: output, c: chunk_bytes, pattern: &pattern };
        run(&mut store, &f.axes, plan.mode());
    }
}

/// Threads for large outputs: `WGPU_PAD_CPU_THREADS` if set, else the machine's parallelism.
fn cpu_threads() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| {
        std::env::var("WGPU_PAD_CPU_THREADS")
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|&n| n > 0)
            .unwrap_or_else(|| thread::available_parallelism().map_or(1, |n| n.get()))
    })
}

/// Splits the outermost axis's kept blocks across threads, then fills its pads.
fn pad_fixed_parallel(
    axes: &[AxisMap],
    mode: Mode,
    c: usize,
    input: &[u8],
    output: &mut [u8],
    pattern: &[u8],
    threads: usize,
) {
    let top = axes[0];
    let (out_strides, in_strides) = strides(axes);
    let block = out_strides[0] * c;
    let (_, kept_region) = output.split_at_mut(top.pad_before * block);
    let (kept_region, _) = kept_region.split_at_mut(top.kept * block);
    let per_thread = top.kept.div_ceil(threads);
    let (out_strides, in_strides) = (&out_strides, &in_strides);
    thread::scope(|scope| {
        for (t, part) in kept_region.chunks_mut(per_thread * block).enumerate() {
            let first = t * per_thread;
            scope.spawn(move || {
                let blocks = part.len() / block;
                let mut store = ByteStore { input, out: part, c, pattern };
                for j in 0..blocks {
                    let in_base = (top.crop_start + first + j) * in_strides[0];
                    fill_axis(&mut store, axes, out_strides, in_strides, 1, j * out_strides[0], in_base, mode);
                }
            });
        }
    });
    let mut store = ByteStore { input, out: output, c, pattern };
    extend_axis(&mut store, &top, out_strides[0], 0, mode);
}

/// Output and input strides per axis, in chunks.
fn strides(axes: &[AxisMap]) -> (Vec<usize>, Vec<usize>) {
    let mut out = vec![1; axes.len()];
    let mut inp = vec![1; axes.len()];
    for d in (0..axes.len().saturating_sub(1)).rev() {
        out[d] = out[d + 1] * axes[d + 1].out_len;
        inp[d] = inp[d + 1] * axes[d + 1].in_len;
    }
    (out, inp)
}

/// Where the output goes and where the input comes from, in chunks.
trait Store {
    /// `out[dst..dst+len] = input[src..src+len]`
    fn copy_in(&mut self, dst: usize, src: usize, len: usize);
    /// `out[dst..dst+len] = out[src..src+len]`, ranges disjoint.
    fn copy_out(&mut self, dst: usize, src: usize, len: usize);
    /// `out[dst..dst+len] = constant`
    fn fill(&mut self, dst: usize, len: usize);
    /// Reverses the order of the chunks `out[dst..dst+len]`.
    fn reverse(&mut self, dst: usize, len: usize);
}

fn run<S: Store>(store: &mut S, axes: &[AxisMap], mode: Mode) {
    let (out_strides, in_strides) = strides(axes);
    fill_axis(store, axes, &out_strides, &in_strides, 0, 0, 0, mode);
}

/// Writes the block of axis `d` at `out_base`: its kept sub-blocks, then its pads.
#[allow(clippy::too_many_arguments)]
fn fill_axis<S: Store>(
    store: &mut S,
    axes: &[AxisMap],
    out_strides: &[usize],
    in_strides: &[usize],
    d: usize,
    out_base: usize,
    in_base: usize,
    mode: Mode,
) {
    let a = axes[d];
    let (os, is) = (out_strides[d], in_strides[d]);
    if d + 1 == axes.len() {
        store.copy_in(out_base + a.pad_before, in_base + a.crop_start, a.kept);
    } else {
        for j in 0..a.kept {
            let (o, i) = (out_base + (a.pad_before + j) * os, in_base + (a.crop_start + j) * is);
            fill_axis(store, axes, out_strides, in_strides, d + 1, o, i, mode);
        }
    }
    extend_axis(store, &a, os, out_base, mode);
}

/// Fills axis `a`'s pads (blocks of `block` chunks) from its kept blocks, already written.
fn extend_axis<S: Store>(store: &mut S, a: &AxisMap, block: usize, base: usize, mode: Mode) {
    let kept_end = a.pad_before + a.kept;
    if mode == Mode::Constant || a.kept == 0 {
        store.fill(base, a.pad_before * block);
        store.fill(base + kept_end * block, a.pad_after * block);
        return;
    }
    for (start, end) in [(0, a.pad_before), (kept_end, kept_end + a.pad_after)] {
        if start == end {
            continue;
        }
        if mode == Mode::Edge || (mode == Mode::Reflect && a.kept == 1) {
            let src = if start == 0 { a.pad_before } else { kept_end - 1 };
            replicate(store, base + start * block, base + src * block, end - start, block);
            continue;
        }
        // Walk the periodic extension in runs: ascending runs are one copy; descending
        // runs (mirrors) are a copy reversed in place.
        let n = a.kept;
        let j = start as i64 - a.pad_before as i64;
        let mut k = crate::plan::source_index(mode, j, n as u64).unwrap_or(0) as usize;
        let next = crate::plan::source_index(mode, j + 1, n as u64).unwrap_or(0) as usize;
        // Symmetric repeats the top (n-1, n-1): the first of the two ends an ascending run.
        let mut ascending = mode == Mode::Wrap || next == k + 1 || (mode == Mode::Symmetric && next == k && k == n - 1);
        let mut o = start;
        let src = |k: usize| base + (a.pad_before + k) * block;
        while o < end {
            let dst = base + o * block;
            if ascending {
                let run = (n - k).min(end - o);
                store.copy_out(dst, src(k), run * block);
                o += run;
                // After the top: wrap restarts at 0, reflect turns at n-2, symmetric at n-1.
                match mode {
                    Mode::Wrap => k = 0,
                    _ if n == 1 => k = 0,
                    Mode::Reflect => (k, ascending) = (n - 2, false),
                    _ => (k, ascending) = (n - 1, false),
                }
            } else {
                let run = (k + 1).min(end - o);
                // Positions o.. take sources k, k-1, …, k-run+1.
                let low = k + 1 - run;
                if block == 1 {
                    store.copy_out(dst, src(low), run);
                    store.reverse(dst, run);
                } else {
                    for i in 0..run {
                        store.copy_out(dst + i * block, src(k - i), block);
                    }
                }
                o += run;
                // After the bottom: reflect turns at 1, symmetric at 0.
                (k, ascending) = if mode == Mode::Reflect { (1, true) } else { (0, true) };
            }
        }
    }
}

/// Fills `count` blocks at `dst` with copies of the block at `src`, doubling each time.
fn replicate<S: Store>(store: &mut S, dst: usize, src: usize, count: usize, block: usize) {
    if count == 0 {
        return;
    }
    store.copy_out(dst, src, block);
    let total = count * block;
    let mut done = block;
    while done < total {
        let n = done.min(total - done);
        store.copy_out(dst + done, dst, n);
        done += n;
    }
}

struct ByteStore<'a> {
    input: &'a [u8],
    out: &'a mut [u8],
    /// Bytes per chunk.
    c: usize,
    /// The constant, repeated to one chunk.
    pattern: &'a [u8],
}

impl Store for ByteStore<'_> {
    fn copy_in(&mut self, dst: usize, src: usize, len: usize) {
        let (c, n) = (self.c, len * self.c);
        self.out[dst * c..dst * c + n].copy_from_slice(&self.input[src * c..src * c + n]);
    }

    fn copy_out(&mut self, dst: usize, src: usize, len: usize) {
        let (c, n) = (self.c, len * self.c);
        let (d, s) = (dst * c, src * c);
        // Single elements (mirrored pads) are common; give them fixed-size copies.
        match n {
            1 => self.out[d] = self.out[s],
            2 => copy_fixed::<2>(self.out, d, s),
            4 => copy_fixed::<4>(self.out, d, s),
            8 => copy_fixed::<8>(self.out, d, s),
            16 => copy_fixed::<16>(self.out, d, s),
            _ => self.out.copy_within(s..s + n, d),
        }
    }

    fn fill(&mut self, dst: usize, len: usize) {
        if len == 0 {
            return;
        }
        let (c, n) = (self.c, len * self.c);
        let region = &mut self.out[dst * c..dst * c + n];
        if self.pattern.iter().all(|&b| b == self.pattern[0]) {
            region.fill(self.pattern[0]);
            return;
        }
        region[..c].copy_from_slice(self.pattern);
        let mut done = c;
        while done < n {
            let k = done.min(n - done);
            region.copy_within(0..k, done);
            done += k;
        }
    }

    fn reverse(&mut self, dst: usize, len: usize) {
        let c = self.c;
        let region = &mut self.out[dst * c..(dst + len) * c];
        match c {
            1 => region.reverse(),
            2 => reverse_fixed::<2>(region),
            4 => reverse_fixed::<4>(region),
            8 => reverse_fixed::<8>(region),
            16 => reverse_fixed::<16>(region),
            _ => reverse_chunks(region, c),
        }
    }
}

/// Reverses the order of the `c`-item chunks of `region`.
fn reverse_chunks<T>(region: &mut [T], c: usize) {
    let len = region.len() / c;
    for i in 0..len / 2 {
        let (head, tail) = region.split_at_mut((len - 1 - i) * c);
        head[i * c..(i + 1) * c].swap_with_slice(&mut tail[..c]);
    }
}

fn reverse_fixed<const N: usize>(region: &mut [u8]) {
    let chunks: &mut [[u8; N]] = bytemuck::cast_slice_mut(region);
    chunks.reverse();
}

fn copy_fixed<const N: usize>(out: &mut [u8], dst: usize, src: usize) {
    let v: [u8; N] = out[src..src + N].try_into().expect("range of N bytes");
    out[dst..dst + N].copy_from_slice(&v);
}

struct StringStore<'a> {
    input: &'a [String],
    out: &'a mut [String],
    c: usize,
    constant: String,
}

impl Store for StringStore<'_> {
    fn copy_in(&mut self, dst: usize, src: usize, len: usize) {
        let (c, n) = (self.c, len * self.c);
        self.out[dst * c..dst * c + n].clone_from_slice(&self.input[src * c..src * c + n]);
    }

    fn copy_out(&mut self, dst: usize, src: usize, len: usize) {
        let (c, n) = (self.c, len * self.c);
        let (d, s) = (dst * c, src * c);
        if d > s {
            let (head, tail) = self.out.split_at_mut(d);
            tail[..n].clone_from_slice(&head[s..s + n]);
        } else {
            let (head, tail) = self.out.split_at_mut(s);
            head[d..d + n].clone_from_slice(&tail[..n]);
        }
    }

    fn fill(&mut self, dst: usize, len: usize) {
        let c = self.c;
        for s in &mut self.out[dst * c..(dst + len) * c] {
            s.clone_from(&self.constant);
        }
    }

    fn reverse(&mut self, dst: usize, len: usize) {
        let c = self.c;
        reverse_chunks(&mut self.out[dst * c..(dst + len) * c], c);
    }
}
