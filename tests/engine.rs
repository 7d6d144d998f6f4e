//! The GPU path as an inference engine relies on it: pads past the storage-binding limit,
//! views into larger buffers, prepared pads recorded into an open pass, fallible
//! construction, visible fallback, and futures that can be spawned.

mod common;

use common::{plan, storage};

use wgpu_pad::gpu::{BufferRange, ExecPath, GpuContext, PadKernel};
use wgpu_pad::{cpu, DataType, GpuLimit, Mode, PadError, PadPlan, PadRequest, Side, Tensor};

fn pattern(dtype: DataType, shape: &[usize], seed: u8) -> Tensor {
    let n: usize = shape.iter().product::<usize>() * dtype.width().bytes().unwrap();
    let bytes = (0..n).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed ^ (i >> 12) as u8)).collect();
    Tensor::from_bytes(dtype, shape.to_vec(), bytes).unwrap()
}

/// Reads a whole buffer back to the host.
fn read(ctx: &GpuContext, buffer: &wgpu::Buffer) -> Vec<u8> {
    common::read(ctx, buffer, 0, buffer.size())
}

/// Runs one pad with the kernel (dispatches counted), returns (output, dispatches).
fn pad_on_kernel(ctx: &GpuContext, p: &PadPlan, x: &Tensor) -> (Vec<u8>, usize) {
    let (_, out_bytes) = p.byte_sizes().unwrap();
    let input = storage(ctx, x.bytes().unwrap());
    let output = storage(ctx, &vec![0u8; out_bytes as usize]);
    let mut enc = ctx.device().create_command_encoder(&Default::default());
    let e = ctx.kernel().encode(&mut enc, p, BufferRange::whole(&input), BufferRange::whole(&output)).unwrap();
    ctx.queue().submit([enc.finish()]);
    common::assert_no_gpu_errors();
    let mut y = read(ctx, &output);
    y.truncate(out_bytes as usize);
    (y, e.dispatches)
}

/// The program of `p` on dense buffers under WebGPU's default limits (128 MiB bindings):
/// its dispatches, and the largest input binding.
fn webgpu_program(p: &PadPlan) -> wgpu_pad::gpu::Program {
    use wgpu_pad::gpu::{BufferView, DeviceLimits, Program};
    let (i, o) = p.byte_sizes().unwrap();
    let limits = DeviceLimits { max_buffer: 1 << 40, ..DeviceLimits::WEBGPU_DEFAULT };
    let view = |bytes: u64| BufferView::dense(0, bytes.next_multiple_of(4));
    Program::new(p, &view(i), &view(o), &limits).unwrap()
}

fn webgpu_dispatches(p: &PadPlan) -> usize {
    webgpu_program(p).dispatches().len()
}

/// Outputs and inputs past lavapipe's (and WebGPU's default) 128 MiB storage-binding limit,
/// in every mode and every moved width, bit for bit against the CPU path.
#[test]
fn past_the_binding_limit_in_every_mode_and_width() {
    let Some(ctx) = common::gpu() else { return };
    let limit = ctx.device().limits().max_storage_buffer_binding_size;
    // Square tensors of just over 128 MiB per width; the pads leave the rows unaligned.
    let cases = [
        (DataType::Uint8, 11_600usize),
        (DataType::Float16, 8_200),
        (DataType::Float32, 5_800),
        (DataType::Int64, 4_100),
        (DataType::Complex128, 2_900),
    ];
    for (i, (dtype, n)) in cases.into_iter().enumerate() {
        let x = pattern(dtype, &[n, n], i as u8);
        for (j, mode) in Mode::ALL.into_iter().enumerate() {
            let p = plan(dtype, &[n, n], &[1, 2, 3, 1], mode);
            let (in_bytes, out_bytes) = p.byte_sizes().unwrap();
            assert!(in_bytes > limit.min(128 << 20) && out_bytes > limit.min(128 << 20), "{dtype} fits one binding");
            let (y, dispatches) = pad_on_kernel(ctx, &p, &x);
            // Past this device's binding limit it splits; under WebGPU's defaults (128 MiB, as
            // lavapipe's) it does on any device, which the program shows without one.
            if in_bytes.max(out_bytes) > limit {
                assert!(dispatches > 1, "{dtype} {mode}: {dispatches} dispatch past the device's limit");
            }
            assert!(webgpu_dispatches(&p) > 1, "{dtype} {mode}: one dispatch under WebGPU's limits");
            let want = cpu::pad(&p, &x).unwrap();
            assert!(y == want.bytes().unwrap(), "{dtype} {mode} differs from the CPU path (case {i}.{j})");
        }
    }
}

#[test]
fn one_dimensional_and_cropped_inputs_past_the_binding_limit() {
    let Some(ctx) = common::gpu() else { return };
    // 1-D, 140 MB of u8 and of f32.
    for (dtype, n, mode) in
        [(DataType::Uint8, 140_000_001usize, Mode::Reflect), (DataType::Float32, 35_000_003, Mode::Wrap)]
    {
        let p = plan(dtype, &[n], &[3, 5], mode);
        let x = pattern(dtype, &[n], 9);
        let padded = ctx.pad_blocking(&p, &x).unwrap();
        assert_eq!(padded.path, ExecPath::Gpu);
        assert!(padded.tensor == cpu::pad(&p, &x).unwrap(), "1-D {dtype} differs");
        assert!(webgpu_dispatches(&p) > 1, "1-D {dtype}: one dispatch under WebGPU's limits");
    }
    // A 256 MiB input cropped to 140 KB: only the window it reads is bound.
    let n = 64 << 20;
    let p = plan(DataType::Float32, &[n], &[-(n as i64 - 35_000), 2], Mode::Symmetric);
    let x = pattern(DataType::Float32, &[n], 4);
    let padded = ctx.pad_blocking(&p, &x).unwrap();
    assert_eq!((padded.path, padded.tensor.len()), (ExecPath::Gpu, 35_002));
    assert!(padded.tensor == cpu::pad(&p, &x).unwrap());
    let bound = webgpu_program(&p).dispatches().iter().filter_map(|d| d.input()).map(|(_, size)| size).max();
    assert!(bound.is_some_and(|b| b <= 1 << 20), "the cropped input bound {bound:?} bytes, not its window");
}

/// One slice of a concat on the innermost axis: two pads write their halves of one buffer
/// through strided views at offsets that are not 256-aligned; bytes around them stay.
#[test]
fn pads_into_an_inner_axis_slice_of_a_concat() {
    let Some(ctx) = common::gpu() else { return };
    for dtype in [DataType::Float32, DataType::Int64, DataType::Uint8] {
        let e = dtype.width().bytes().unwrap() as u64;
        // Left: [2, 3, 5, 6] padded to [2, 3, 7, 8]; right: [2, 3, 7, 4] (unpadded rows, so
        // 8-bit words stay whole). Concat on the last axis: [2, 3, 7, 12] at element offset 3
        // (4 for u8, whose rows move as whole 4-byte words).
        let base = if e == 1 { 4 } else { 3 };
        let left = plan(dtype, &[2, 3, 5, 6], &[0, 0, 1, 1, 0, 0, 1, 1], Mode::Reflect);
        let right = plan(dtype, &[2, 3, 7, 4], &[0, 1, 0, 0, 0, -1, 0, 0], Mode::Edge);
        let (xl, xr) = (pattern(dtype, &[2, 3, 5, 6], 1), pattern(dtype, &[2, 3, 7, 4], 2));
        let shape = [2usize, 3, 7, 12];
        let strides = [3 * 7 * 12u64, 7 * 12, 12, 1];
        let total = base + shape.iter().product::<usize>() + 5;
        let concat = storage(ctx, &vec![0xEE; total * e as usize]);
        let (il, ir) = (storage(ctx, xl.bytes().unwrap()), storage(ctx, xr.bytes().unwrap()));
        let mut enc = ctx.device().create_command_encoder(&Default::default());
        let k = ctx.kernel();
        let out = |first: u64| BufferRange::at(&concat, (base as u64 + first) * e).with_strides(&strides);
        if dtype == DataType::Uint8 {
            // The left half's padded 8-bit rows cannot be written word by word: refused.
            let err = k.encode(&mut enc, &left, BufferRange::whole(&il), out(0)).unwrap_err();
            assert!(matches!(err, PadError::InvalidView { which: Side::Output, .. }), "{err}");
            assert!(err.to_string().contains("must be dense"), "{err}");
        } else {
            k.encode(&mut enc, &left, BufferRange::whole(&il), out(0)).unwrap();
        }
        k.encode(&mut enc, &right, BufferRange::whole(&ir), out(8)).unwrap();
        ctx.queue().submit([enc.finish()]);
        common::assert_no_gpu_errors();
        let got = read(ctx, &concat);

        let mut want = vec![0xEEu8; total * e as usize];
        want.resize(got.len(), 0); // the buffer's rounding to whole words
        let mut place = |y: &Tensor, first: usize, width: usize| {
            let b = y.bytes().unwrap();
            for (row, chunk) in b.chunks(width * e as usize).enumerate() {
                let at = (base + row * 12 + first) * e as usize;
                want[at..at + chunk.len()].copy_from_slice(chunk);
            }
        };
        if dtype != DataType::Uint8 {
            place(&cpu::pad(&left, &xl).unwrap(), 0, 8);
        }
        place(&cpu::pad(&right, &xr).unwrap(), 8, 4);
        let bad: Vec<usize> = (0..got.len()).filter(|&i| got[i] != want[i]).take(12).collect();
        assert!(got == want, "{dtype}: the concat differs at bytes {bad:?} of {}", got.len());
    }
}

/// The tensor of `shape` that a view with element `strides` over `stored` (elements of `e`
/// bytes) shows, gathered densely on the host.
fn gather(stored: &[u8], e: usize, shape: &[usize], strides: &[u64]) -> Vec<u8> {
    let mut dense = Vec::new();
    for i in 0..shape.iter().product::<usize>() {
        let (mut rest, mut at) = (i, 0usize);
        for (&n, &s) in shape.iter().zip(strides).rev() {
            at += (rest % n) * s as usize;
            rest /= n;
        }
        dense.extend_from_slice(&stored[at * e..(at + 1) * e]);
    }
    dense
}

/// Inputs read through views: a transpose, a broadcast (stride 0), and an offset that is
/// not 256-aligned.
#[test]
fn pads_from_transposed_and_broadcast_input_views() {
    let Some(ctx) = common::gpu() else { return };
    for dtype in [DataType::Uint8, DataType::Float16, DataType::Float32, DataType::Complex128] {
        let e = dtype.width().bytes().unwrap();
        // Stored as [9, 7]; read as its transpose [7, 9].
        let stored = pattern(dtype, &[9, 7], 5);
        let sb = stored.bytes().unwrap();
        let transposed = Tensor::from_bytes(dtype, vec![7, 9], gather(sb, e, &[7, 9], &[1, 7])).unwrap();
        for mode in Mode::ALL {
            let p = plan(dtype, &[7, 9], &[2, 1, 3, 4], mode);
            let mut buf = vec![0u8; 5 * e];
            buf.extend_from_slice(sb);
            let input = storage(ctx, &buf);
            let (_, out_bytes) = p.byte_sizes().unwrap();
            let output = storage(ctx, &vec![0u8; out_bytes as usize + 2 * e]);
            let mut enc = ctx.device().create_command_encoder(&Default::default());
            let view = BufferRange::at(&input, 5 * e as u64).with_strides(&[1, 7]);
            ctx.kernel().encode(&mut enc, &p, view, BufferRange::at(&output, e as u64)).unwrap();
            ctx.queue().submit([enc.finish()]);
            common::assert_no_gpu_errors();
            let got = read(ctx, &output);
            let want = cpu::pad(&p, &transposed).unwrap();
            assert!(got[e..e + out_bytes as usize] == *want.bytes().unwrap(), "{dtype} {mode}: transpose differs");
            assert!(got[..e].iter().all(|&b| b == 0), "{dtype} {mode}: wrote before the output");
        }
        // Broadcast: one row of 9 read as [4, 9].
        let row = pattern(dtype, &[9], 8);
        let p = plan(dtype, &[4, 9], &[1, 2, 0, 3], Mode::Wrap);
        let input = storage(ctx, row.bytes().unwrap());
        let (_, out_bytes) = p.byte_sizes().unwrap();
        let output = storage(ctx, &vec![0u8; out_bytes as usize]);
        let mut enc = ctx.device().create_command_encoder(&Default::default());
        ctx.kernel()
            .encode(&mut enc, &p, BufferRange::whole(&input).with_strides(&[0, 1]), BufferRange::whole(&output))
            .unwrap();
        ctx.queue().submit([enc.finish()]);
        common::assert_no_gpu_errors();
        let full = Tensor::from_bytes(dtype, vec![4, 9], row.bytes().unwrap().repeat(4)).unwrap();
        let want = cpu::pad(&p, &full).unwrap();
        assert!(read(ctx, &output)[..out_bytes as usize] == *want.bytes().unwrap(), "{dtype}: broadcast differs");
    }
}

/// 8- and 16-bit rows of whole words read through views whose rows are not contiguous in the
/// input (every other column; pixels with a fourth, unread channel; planar channels read as
/// interleaved), at an odd element offset, with a crop: a kept word must take each element
/// from where the view puts it, not from the next bytes of the input.
#[test]
fn pads_word_rows_from_views_with_gaps() {
    let Some(ctx) = common::gpu() else { return };
    struct Case {
        stored_shape: &'static [usize],
        shape: &'static [usize],
        // The view's strides, in elements.
        strides: &'static [u64],
        pads: &'static [i64],
    }
    let cases = [
        Case { stored_shape: &[6, 24], shape: &[6, 12], strides: &[24, 2], pads: &[1, 2, 0, 2] },
        Case { stored_shape: &[6, 24], shape: &[6, 12], strides: &[24, 2], pads: &[0, 5, 1, -1] },
        Case { stored_shape: &[5, 10, 4], shape: &[5, 10, 3], strides: &[40, 4, 1], pads: &[1, 1, 0, 0, 1, 0] },
        Case { stored_shape: &[3, 5, 10], shape: &[5, 10, 3], strides: &[10, 1, 50], pads: &[0, 1, 0, 2, 1, 0] },
    ];
    for dtype in [DataType::Uint8, DataType::Float16] {
        let e = dtype.width().bytes().unwrap();
        for &Case { stored_shape, shape, strides, pads } in &cases {
            let stored = pattern(dtype, stored_shape, 3);
            let sb = stored.bytes().unwrap();
            let viewed = Tensor::from_bytes(dtype, shape.to_vec(), gather(sb, e, shape, strides)).unwrap();
            let mut buf = vec![0u8; 3 * e];
            buf.extend_from_slice(sb);
            let input = storage(ctx, &buf);
            for mode in Mode::ALL {
                let p = plan(dtype, shape, pads, mode);
                let (_, out_bytes) = p.byte_sizes().unwrap();
                let output = storage(ctx, &vec![0u8; out_bytes as usize]);
                let mut enc = ctx.device().create_command_encoder(&Default::default());
                let view = BufferRange::at(&input, 3 * e as u64).with_strides(strides);
                ctx.kernel().encode(&mut enc, &p, view, BufferRange::whole(&output)).unwrap();
                ctx.queue().submit([enc.finish()]);
                common::assert_no_gpu_errors();
                let got = read(ctx, &output);
                let want = cpu::pad(&p, &viewed).unwrap();
                assert!(
                    got[..out_bytes as usize] == *want.bytes().unwrap(),
                    "{dtype} {mode} {shape:?} strides {strides:?} pads {pads:?} differs"
                );
            }
        }
    }
}

/// Short rows written through a transposed output view (channels between rows and columns:
/// [C, H, W] stored as [H, C, W]): rows packed several to a workgroup, the last workgroup
/// part full. An invocation past the window's rows would land on a real row here (its
/// outermost coordinate has the smallest stride), where past a dense output it would fall
/// outside the binding and be dropped. (8- and 16-bit padded rows need a dense output.)
#[test]
fn pads_short_rows_into_a_transposed_output_view() {
    let Some(ctx) = common::gpu() else { return };
    let (shape, pads) = ([7usize, 9, 6], [0i64, 0, 1, 0, 0, 1]);
    let out_shape = [7usize, 9, 8];
    let strides = [8u64, 7 * 8, 1];
    for dtype in [DataType::Float32, DataType::Int64, DataType::Complex128] {
        let e = dtype.width().bytes().unwrap();
        let x = pattern(dtype, &shape, 6);
        let input = storage(ctx, x.bytes().unwrap());
        for mode in Mode::ALL {
            let p = plan(dtype, &shape, &pads, mode);
            let output = storage(ctx, &vec![0xEEu8; out_shape.iter().product::<usize>() * e]);
            let mut enc = ctx.device().create_command_encoder(&Default::default());
            let view = BufferRange::whole(&output).with_strides(&strides);
            ctx.kernel().encode(&mut enc, &p, BufferRange::whole(&input), view).unwrap();
            ctx.queue().submit([enc.finish()]);
            common::assert_no_gpu_errors();
            let got = gather(&read(ctx, &output), e, &out_shape, &strides);
            let want = cpu::pad(&p, &x).unwrap();
            assert!(got == *want.bytes().unwrap(), "{dtype} {mode}: the transposed output differs");
        }
    }
}

#[test]
fn refused_views_say_why() {
    let Some(ctx) = common::gpu() else { return };
    let k = ctx.kernel();
    let p = plan(DataType::Float32, &[4, 4], &[1, 1, 1, 1], Mode::Edge); // out [6, 6]
    let buf = storage(ctx, &[0u8; 4096]);
    let other = storage(ctx, &[0u8; 4096]);
    let mut enc = ctx.device().create_command_encoder(&Default::default());
    let mut refuse =
        |input: BufferRange, output: BufferRange, p: &PadPlan, ok: fn(&PadError) -> bool, words: &[&str]| {
            let e = k.encode(&mut enc, p, input, output).unwrap_err();
            assert!(ok(&e), "unexpected {e:?}");
            let msg = e.to_string();
            for w in words {
                assert!(msg.contains(w), "{msg:?} lacks {w:?}");
            }
        };
    // Output elements sharing places: a zero stride, then rows closer than their length.
    refuse(
        BufferRange::whole(&other),
        BufferRange::whole(&buf).with_strides(&[0, 1]),
        &p,
        |e| matches!(e, PadError::InvalidView { which: Side::Output, .. }),
        &["axis 0", "stride 0"],
    );
    refuse(
        BufferRange::whole(&other),
        BufferRange::whole(&buf).with_strides(&[5, 1]),
        &p,
        |e| matches!(e, PadError::InvalidView { .. }),
        &["axis 0", "stride 5"],
    );
    // Wrong number of strides.
    refuse(
        BufferRange::whole(&other).with_strides(&[4]),
        BufferRange::whole(&buf),
        &p,
        |e| matches!(e, PadError::InvalidView { which: Side::Input, .. }),
        &["1 strides", "2 axes"],
    );
    // A view reaching past its buffer.
    refuse(
        BufferRange::whole(&other).with_strides(&[1000, 1]),
        BufferRange::whole(&buf),
        &p,
        |e| matches!(e, PadError::BufferTooSmall { which: Side::Input, .. }),
        &["input"],
    );
    // Strided 16-bit output rows that are padded: word stores cannot write them safely.
    let h = plan(DataType::Float16, &[4, 4], &[0, 1, 0, 1], Mode::Constant);
    refuse(
        BufferRange::whole(&other),
        BufferRange::whole(&buf).with_strides(&[8, 1]),
        &h,
        |e| matches!(e, PadError::InvalidView { which: Side::Output, .. }),
        &["16-bit", "dense"],
    );
    // Input and output views overlapping in one buffer, at unaligned offsets.
    refuse(
        BufferRange::at(&buf, 4),
        BufferRange::at(&buf, 40),
        &p,
        |e| matches!(e, PadError::Overlap { .. }),
        &["overlap"],
    );
    // An offset that is not a multiple of the element size.
    refuse(
        BufferRange::at(&other, 6),
        BufferRange::whole(&buf),
        &p,
        |e| matches!(e, PadError::MisalignedOffset { alignment: 4, .. }),
        &["offset 6"],
    );
}

/// Many prepared pads recorded into one compute pass the engine has open, between its own
/// dispatches, and the same prepared pads reused in a second submission on new data.
#[test]
fn prepared_pads_in_one_open_pass_and_across_submissions() {
    let Some(ctx) = common::gpu() else { return };
    let kernel = ctx.kernel();
    let plans: Vec<PadPlan> = (0..12)
        .map(|i| {
            let dtype = [DataType::Float32, DataType::Uint8, DataType::Float16, DataType::Int64][i % 4];
            plan(dtype, &[3 + i % 3, 5 + i % 4], &[1, 0, i as i64 % 3, 2], Mode::ALL[i % 5])
        })
        .collect();
    let mut buffers = Vec::new();
    for (i, p) in plans.iter().enumerate() {
        let x = pattern(p.dtype(), p.in_shape(), i as u8);
        let (_, o) = p.byte_sizes().unwrap();
        buffers.push((storage(ctx, x.bytes().unwrap()), storage(ctx, &vec![0u8; o as usize])));
    }
    let prepared: Vec<_> = plans
        .iter()
        .zip(&buffers)
        .map(|(p, (i, o))| kernel.prepare(p, BufferRange::whole(i), BufferRange::whole(o)).unwrap())
        .collect();
    let compiled = kernel.compile_count();
    for round in 0..2u8 {
        if round == 1 {
            // New inputs, same buffers: the prepared pads are reused as they are.
            for (i, (p, (input, _))) in plans.iter().zip(&buffers).enumerate() {
                let x = pattern(p.dtype(), p.in_shape(), 100 + i as u8);
                ctx.queue().write_buffer(input, 0, &{
                    let mut b = x.bytes().unwrap().to_vec();
                    b.resize(b.len().next_multiple_of(4), 0);
                    b
                });
            }
        }
        let mut enc = ctx.device().create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            for pad in &prepared {
                pad.record(&mut pass);
            }
        }
        ctx.queue().submit([enc.finish()]);
        common::assert_no_gpu_errors();
        for (i, (p, (_, output))) in plans.iter().zip(&buffers).enumerate() {
            let seed = if round == 0 { i as u8 } else { 100 + i as u8 };
            let want = cpu::pad(p, &pattern(p.dtype(), p.in_shape(), seed)).unwrap();
            let got = read(ctx, output);
            assert!(got[..want.bytes().unwrap().len()] == *want.bytes().unwrap(), "round {round}, pad {i} differs");
        }
    }
    assert_eq!(kernel.compile_count(), compiled, "recording compiled something");
    pollster::block_on(kernel.pop_errors()).unwrap();
}

/// What an engine has, taken as it has it: (before, after) pairs, a numeric constant in a
/// type the tensor is not (f64 for a float16 tensor, an exact i64 for an int64 one), ranges
/// of a pool bounded by size; errors popped without an executor. Bytes around the ranges
/// stay as they were, and a bounded range too small for the tensor is refused.
#[test]
fn pairs_numeric_constants_and_sized_ranges_as_an_engine_gives_them() {
    let Some(ctx) = common::gpu() else { return };
    let cases = [
        (DataType::Float16, wgpu_pad::Scalar::Float(-2.5)),
        (DataType::Int64, wgpu_pad::Scalar::Int(i64::MIN + 1)),
        (DataType::Uint8, wgpu_pad::Scalar::Float(200.0)),
    ];
    for (dtype, value) in cases {
        for mode in Mode::ALL {
            let request = PadRequest::from_pairs(&[(1, 2), (-1, 3)]).mode(mode).constant(value);
            let p = PadPlan::new(dtype, &[3, 4], &request).unwrap();
            let x = pattern(dtype, &[3, 4], 7);
            let (i, o) = p.byte_sizes().unwrap();
            // [sentinel | x | sentinel | y | sentinel], ranges at element-aligned offsets.
            let (x_at, y_at) = (256 + 8, 512 + 256 + 8);
            let mut pool = vec![0xa5u8; (y_at + o + 256) as usize];
            pool[x_at as usize..(x_at + i) as usize].copy_from_slice(x.bytes().unwrap());
            let pool = storage(ctx, &pool);
            let before = read(ctx, &pool);
            let pad =
                ctx.kernel().prepare(&p, BufferRange::new(&pool, x_at, i), BufferRange::new(&pool, y_at, o)).unwrap();
            let mut enc = ctx.device().create_command_encoder(&Default::default());
            pad.record(&mut enc.begin_compute_pass(&Default::default()));
            ctx.queue().submit([enc.finish()]);
            ctx.kernel().pop_errors_blocking().unwrap();
            common::assert_no_gpu_errors();
            let after = read(ctx, &pool);
            let want = cpu::pad(&p, &x).unwrap();
            let (y_at, o) = (y_at as usize, o as usize);
            assert_eq!(&after[y_at..y_at + o], want.bytes().unwrap(), "{dtype} {mode}");
            assert!(after[..y_at] == before[..y_at] && after[y_at + o..] == before[y_at + o..], "{dtype} {mode}");
            if mode == Mode::Constant {
                let c = value.to_tensor(dtype).unwrap();
                assert_eq!(&after[y_at..y_at + c.bytes().unwrap().len()], c.bytes().unwrap(), "{dtype}: corner");
            }
            // One byte short of the output: refused, naming the range.
            let short = ctx.kernel().prepare(
                &p,
                BufferRange::new(&pool, x_at, i),
                BufferRange::new(&pool, y_at as u64, o as u64 - 1),
            );
            assert!(matches!(short, Err(PadError::BufferTooSmall { which: Side::Output, .. })), "{short:?}");
        }
    }
}

/// The pipeline set depends on mode, word width and two fixed variants only: all 5 modes
/// and 8 types of every width compile 88 pipelines ahead of time, and pads then compile none.
#[test]
fn precompiled_pipelines_are_bounded_and_enough() {
    let Some(ctx) = common::gpu() else { return };
    // Made only where the device has the feature: elsewhere making one is a validation error
    // (which the shared context's error record caught when this made it regardless).
    let cache = ctx.device().features().contains(wgpu::Features::PIPELINE_CACHE).then(|| unsafe {
        ctx.device().create_pipeline_cache(&wgpu::PipelineCacheDescriptor { label: None, data: None, fallback: true })
    });
    let kernel = PadKernel::with_pipeline_cache(ctx.device(), cache).unwrap();
    let types = [
        DataType::Uint8,
        DataType::Float16,
        DataType::Float32,
        DataType::Int64,
        DataType::Complex128,
        DataType::Bool,
        DataType::String,
        DataType::Int4,
    ];
    let n = pollster::block_on(kernel.precompile(&Mode::ALL, &types)).unwrap();
    assert_eq!(n, PadKernel::PIPELINES);
    let before = kernel.compile_count();
    for (i, dtype) in types.iter().filter(|d| d.gpu_capable()).enumerate() {
        for mode in Mode::ALL {
            for shape in [[1usize, 3, 9, 8], [4, 5, 6, 7]] {
                let p = plan(*dtype, &shape, &[0, 1, 2, 0, 0, 1, i as i64 % 3, 9], mode);
                let (i_b, o_b) = p.byte_sizes().unwrap();
                let (ib, ob) = (storage(ctx, &vec![0; i_b as usize]), storage(ctx, &vec![0; o_b as usize]));
                kernel.prepare(&p, BufferRange::whole(&ib), BufferRange::whole(&ob)).unwrap();
            }
        }
    }
    assert_eq!(kernel.compile_count(), before, "a precompiled kernel compiled more");
}

#[test]
fn unsupported_devices_are_refused_up_front() {
    let Some(ctx) = common::gpu() else { return };
    let no_compute = wgpu::DownlevelCapabilities { flags: wgpu::DownlevelFlags::empty(), ..Default::default() };
    let e = PadKernel::check_support(&ctx.device().limits(), &no_compute).unwrap_err();
    assert!(matches!(e, PadError::DeviceUnsupported { .. }) && e.to_string().contains("compute shaders"), "{e}");
    // WebGL2-like limits: no storage buffers in compute. Making the kernel fails, no panic.
    let limits = wgpu::Limits { max_storage_buffers_per_shader_stage: 0, ..ctx.device().limits() };
    let e = PadKernel::check_support(&limits, &wgpu::DownlevelCapabilities::default()).unwrap_err();
    assert!(e.to_string().contains("max_storage_buffers_per_shader_stage is 0"), "{e}");
    let e = pollster::block_on(GpuContext::with_limits(Some(limits))).err().expect("a device without storage buffers");
    assert!(matches!(e, PadError::DeviceUnsupported { .. }), "{e}");
}

/// Where the GPU path cannot run a plan, `GpuContext::pad` runs it on the CPU and says so,
/// before uploading anything; the kernel returns the typed cause.
#[test]
fn refused_plans_fall_back_visibly() {
    let Some(main) = common::gpu() else { return };
    let limits = wgpu::Limits { max_buffer_size: 1 << 20, ..main.device().limits() };
    let ctx = pollster::block_on(GpuContext::with_limits(Some(limits))).unwrap();
    let p = plan(DataType::Float32, &[600, 600], &[1, 1, 1, 1], Mode::Reflect); // 1.4 MB
    let x = pattern(DataType::Float32, &[600, 600], 2);
    let padded = ctx.pad_blocking(&p, &x).unwrap();
    let ExecPath::CpuFallback { reason } = &padded.path else { panic!("ran on {:?}", padded.path) };
    assert!(reason.contains("max_buffer_size"), "{reason}");
    assert!(padded.tensor == cpu::pad(&p, &x).unwrap());
    let e = ctx.kernel().check_plan(&p).unwrap_err();
    assert!(matches!(e, PadError::GpuLimit { limit: GpuLimit::BufferSize, .. }), "{e}");
    // More padded axes than the shaders hold.
    let shape = vec![1usize; 17];
    let mut pads = vec![1i64; 17];
    pads.extend([0; 17]);
    let q = PadPlan::new(DataType::Int8, &shape, &PadRequest::new(pads).mode(Mode::Edge)).unwrap();
    let x = pattern(DataType::Int8, &shape, 1);
    let padded = main.pad_blocking(&q, &x).unwrap();
    assert!(
        matches!(&padded.path, ExecPath::CpuFallback { reason } if reason.contains("17 axes")),
        "{:?}",
        padded.path
    );
    assert!(padded.tensor == cpu::pad(&q, &x).unwrap());
    assert!(matches!(main.kernel().check_plan(&q), Err(PadError::GpuLimit { limit: GpuLimit::Rank, .. })));
}

#[test]
fn futures_are_send() {
    fn spawnable<F: std::future::Future + Send>(f: F) -> F {
        f
    }
    let Some(ctx) = common::gpu() else { return };
    let p = plan(DataType::Float32, &[3, 3], &[1, 1, 1, 1], Mode::Wrap);
    let x = pattern(DataType::Float32, &[3, 3], 1);
    // Polled on another thread, as a multi-threaded executor would.
    let y = std::thread::scope(|s| s.spawn(|| pollster::block_on(spawnable(ctx.pad(&p, &x)))).join().unwrap());
    assert!(y.unwrap().tensor == cpu::pad(&p, &x).unwrap());
    pollster::block_on(spawnable(ctx.kernel().pop_errors())).unwrap();
    pollster::block_on(spawnable(ctx.kernel().precompile(&[Mode::Edge], &[DataType::Uint8]))).unwrap();
}

/// Round four: a dispatch that reads nothing (an input cropped away) binds a placeholder of
/// `Program::EMPTY_INPUT_BYTES`, as `Program`'s docs say, on a pipeline with wgpu's automatic
/// layout (the minimum binding sizes taken from the WGSL), for every moved width; a host
/// following the docs gets no validation error and the constant, bit for bit.
#[test]
fn a_dispatch_reading_nothing_binds_the_documented_placeholder() {
    use wgpu::util::DeviceExt;
    use wgpu_pad::gpu::{BufferView, DeviceLimits, Program};
    let Some(ctx) = common::gpu() else { return };
    let device = ctx.device();
    let limits = DeviceLimits::from(&device.limits());
    for dtype in [DataType::Uint8, DataType::Float16, DataType::Float32, DataType::Int64, DataType::Complex128] {
        let x = pattern(dtype, &[4, 6], 5);
        let request = PadRequest::new(vec![0, -6, 0, 3])
            .constant(Tensor::from_bytes(dtype, vec![], vec![0x5a; dtype.width().bytes().unwrap()]).unwrap());
        let p = PadPlan::new(dtype, x.shape(), &request).unwrap();
        let (in_bytes, out_bytes) = p.byte_sizes().unwrap();
        let program = Program::new(
            &p,
            &BufferView::dense(0, in_bytes.next_multiple_of(4)),
            &BufferView::dense(0, out_bytes.next_multiple_of(4)),
            &limits,
        )
        .unwrap();
        assert!(program.dispatches().iter().all(|d| d.input().is_none()), "{dtype}: a dispatch reads input");
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: None,
            source: wgpu::ShaderSource::Wgsl(program.wgsl().into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: None,
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let placeholder = device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: Program::EMPTY_INPUT_BYTES,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let output = storage(ctx, &vec![0u8; out_bytes as usize]);
        let mut enc = device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            for d in program.dispatches() {
                let params = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: None,
                    contents: d.params(),
                    usage: wgpu::BufferUsages::UNIFORM,
                });
                let (offset, size) = d.output();
                let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: None,
                    layout: &pipeline.get_bind_group_layout(0),
                    entries: &[
                        wgpu::BindGroupEntry { binding: 0, resource: params.as_entire_binding() },
                        wgpu::BindGroupEntry { binding: 1, resource: placeholder.as_entire_binding() },
                        wgpu::BindGroupEntry {
                            binding: 2,
                            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                buffer: &output,
                                offset,
                                size: wgpu::BufferSize::new(size),
                            }),
                        },
                    ],
                });
                pass.set_bind_group(0, &bind, &[]);
                let [gx, gy, gz] = d.workgroups();
                pass.dispatch_workgroups(gx, gy, gz);
            }
        }
        ctx.queue().submit([enc.finish()]);
        common::assert_no_gpu_errors();
        let mut y = read(ctx, &output);
        y.truncate(out_bytes as usize);
        assert_eq!(y, cpu::pad(&p, &x).unwrap().bytes().unwrap(), "{dtype}");
    }
}
