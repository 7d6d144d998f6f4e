//! Binding windows and buffer views: pads past the storage-binding limit in every mode and
//! width (windows starting in a row's pads, cropped and 1-D inputs, rows over several
//! workgroups), views into larger buffers (an inner-axis slice of a concat, transposed and
//! broadcast inputs, rows with gaps, a transposed output), rank 16, and the views refused
//! with the reason.

mod common;

use common::*;

use wgpu_pad::gpu::{BufferRange, ExecPath};
use wgpu_pad::{cpu, DataType, Mode, PadError, PadPlan, PadRequest, Side, Tensor};

#[test]
fn outputs_past_a_single_dispatch_are_bit_exact() {
    let Some(ctx) = gpu() else { return };
    // 1-D f32: 17 million elements, more than 65535 workgroups of 64 in x.
    let p = plan(DataType::Float32, &[17_000_000], &[3, 5], Mode::Reflect);
    let x = pattern(DataType::Float32, &[17_000_000], 1);
    let y = ctx.pad_blocking(&p, &x).unwrap().tensor;
    assert_eq!(y.len(), 17_000_008);
    assert!(y == cpu::pad(&p, &x).unwrap(), "1-D f32 differs from the CPU path");
    // u8 words: 17 million bytes, odd length (a partial last word).
    let p = plan(DataType::Uint8, &[4_250_001, 4], &[0, 1, 1, 2], Mode::Wrap);
    let x = pattern(DataType::Uint8, &[4_250_001, 4], 7);
    let y = ctx.pad_blocking(&p, &x).unwrap().tensor;
    assert!(y.len() > 16_800_000);
    assert!(y == cpu::pad(&p, &x).unwrap(), "u8 differs from the CPU path");
    // Rows longer than the x dimension holds (the flat grid).
    let p = plan(DataType::Float32, &[2, 4_500_000], &[1, 1, 0, 3], Mode::Wrap);
    let x = pattern(DataType::Float32, &[2, 4_500_000], 5);
    assert!(ctx.pad_blocking(&p, &x).unwrap().tensor == cpu::pad(&p, &x).unwrap());
    // More rows than one grid dimension holds (the linear-rows layout).
    let p = plan(DataType::Int64, &[70_000, 3], &[1, 2, 1, 0], Mode::Symmetric);
    let x = pattern(DataType::Int64, &[70_000, 3], 3);
    assert!(ctx.pad_blocking(&p, &x).unwrap().tensor == cpu::pad(&p, &x).unwrap());
}

/// Rows far longer than a binding window, so that windows start in a row's pad before, in
/// its kept part and in its pad after (narrow.wgsl finds each row's run of kept words from
/// where its window starts), on every mode, 8- and 16-bit.
#[test]
fn windows_that_start_in_a_rows_pads_are_bit_exact() {
    let Some(ctx) = common::gpu_small_bindings() else { return };
    windows_in_pads_on(ctx);
}

fn windows_in_pads_on(ctx: &wgpu_pad::gpu::GpuContext) {
    let cases = [
        (DataType::Uint8, [2, 512], [0, 512, 0, 2560]),
        (DataType::Uint8, [3, 256], [1, 1301, 0, 1500]),
        (DataType::Float16, [2, 1024], [0, 1024, 1, 4096]),
        (DataType::Float16, [3, 256], [0, 1301, 0, 1500]),
    ];
    rows_bit_exact_on(ctx, &cases, 9);
}

/// 8- and 16-bit rows long enough to take several workgroups each in the narrow kernel's
/// row grid (over 2048 words: each lane's kept words a grid width apart, two an iteration),
/// shifted, aligned and ending mid-word, every mode, bit for bit against the CPU path. The
/// property tests' rows stay under 3000 elements, which one workgroup covers.
#[test]
fn long_narrow_rows_over_several_workgroups_are_bit_exact() {
    let Some(ctx) = gpu() else { return };
    long_narrow_rows_on(ctx);
}

// The long-row tests on every kernel variant (the narrow-spread variant's long rows are
// these), and the windows that start in a row's pads on each variant's small bindings:
// each case where the variant runs another program than the default's.
common::variant_shard_tests!(
    every_kernel_variant_runs_long_rows_and_windows_bit_exact,
    variants_run_long_rows_and_windows
);

fn variants_run_long_rows_and_windows(shard: usize) {
    for (variant, ctx) in common::gpu_variant_shard(shard) {
        eprintln!("kernel variant {}", variant.name());
        long_narrow_rows_on(ctx);
        full_row_iterations_on(ctx);
        if ctx.device().limits().max_storage_buffer_binding_size == SMALL_BINDING {
            windows_in_pads_on(ctx);
        }
    }
}

fn long_narrow_rows_on(ctx: &wgpu_pad::gpu::GpuContext) {
    let cases = [
        (DataType::Uint8, [2, 9000], [0, 4, 0, 4]),   // 2252 words: 2 workgroups a row
        (DataType::Uint8, [2, 9000], [0, 3, 0, 5]),   // the same, shifted by 3 bytes
        (DataType::Float16, [2, 4500], [0, 1, 0, 3]), // 2252 words, shifted by a half
        (DataType::Uint8, [3, 20_001], [0, 3, 0, 6]), // 20010 bytes: ending mid-word, 3 workgroups
    ];
    rows_bit_exact_on(ctx, &cases, 11);
}

/// Output rows of exactly a workgroup's 2048 words (64 lanes x NARROW_ROW_WORDS 32), or
/// twice that over two workgroups: in the long-row loop every lane needs all 16 of its
/// iterations, the last pair included (a loop one pair short fails the shifted u8 rows
/// here; rows of 2252 or 2050 words take two workgroups at 18 words a lane and passed it).
/// Aligned and shifted, u8 and f16, every mode.
#[test]
fn rows_that_need_every_iteration_of_every_lane_are_bit_exact() {
    let Some(ctx) = gpu() else { return };
    full_row_iterations_on(ctx);
}

fn full_row_iterations_on(ctx: &wgpu_pad::gpu::GpuContext) {
    let cases = [
        (DataType::Uint8, [2, 8184], [0, 4, 0, 4]), // 8192-byte rows: 2048 words, aligned
        (DataType::Uint8, [2, 8184], [0, 3, 0, 5]), // the same, the input shifted by 3 bytes
        (DataType::Uint8, [2, 16376], [0, 4, 0, 4]), // 4096 words: two workgroups, 32 a lane
        (DataType::Float16, [2, 4092], [0, 2, 0, 2]), // 2048 words of halves, aligned
        (DataType::Float16, [3, 4092], [0, 1, 0, 3]), // shifted by a half, three rows
    ];
    rows_bit_exact_on(ctx, &cases, 5);
}

/// Each case in every mode on `ctx`, bit for bit against the CPU path (the input a pattern
/// from `seed`); on a variant's context only where it runs another program than the
/// default's (the default's run covers the rest).
fn rows_bit_exact_on(ctx: &wgpu_pad::gpu::GpuContext, cases: &[(DataType, [usize; 2], [i64; 4])], seed: u8) {
    let mut ran = 0;
    for &(dtype, shape, pads) in cases {
        let x = pattern(dtype, &shape, seed);
        for mode in Mode::ALL {
            let p = plan(dtype, &shape, &pads, mode);
            if runs_the_default(ctx, &p) {
                continue;
            }
            let y = ctx.pad_blocking(&p, &x).unwrap().tensor;
            assert!(y == cpu::pad(&p, &x).unwrap(), "{dtype:?} {shape:?} {pads:?} {mode:?} differs from the CPU path");
            ran += 1;
        }
    }
    let variant = common::selected(ctx);
    assert!(
        variant != common::KernelVariant::Default || ran == cases.len() * Mode::ALL.len(),
        "the default skipped a case"
    );
    eprintln!("{ran} of {} cases ({})", cases.len() * Mode::ALL.len(), variant.name());
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
        let got = read_whole(ctx, &concat);

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
            let got = read_whole(ctx, &output);
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
        assert!(read_whole(ctx, &output)[..out_bytes as usize] == *want.bytes().unwrap(), "{dtype}: broadcast differs");
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
                let got = read_whole(ctx, &output);
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
            let got = gather(&read_whole(ctx, &output), e, &out_shape, &strides);
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

/// Rank 16, the shaders' most, on the GPU: every other axis padded, so no axes
/// merge; every mode, bit for bit against the CPU path, and it ran on the GPU.
#[test]
fn rank_sixteen_pads_run_on_the_gpu() {
    let Some(ctx) = gpu() else { return };
    let shape = [2usize; 16];
    let pads: Vec<i64> = (0..32).map(|i| i64::from(i % 16 % 2 == 0 && i < 16)).collect();
    let n = 1 << 16;
    let x = Tensor::from_bytes(DataType::Uint8, shape.to_vec(), (0..n).map(|i| (i * 7 % 251) as u8).collect()).unwrap();
    for mode in Mode::ALL {
        let p = PadPlan::new(DataType::Uint8, &shape, &PadRequest::new(pads.clone()).mode(mode)).unwrap();
        let y = ctx.pad_blocking(&p, &x).unwrap();
        assert_eq!(y.path, wgpu_pad::gpu::ExecPath::Gpu, "{mode}: rank 16 fell back");
        assert!(y.tensor == cpu::pad(&p, &x).unwrap(), "{mode}");
    }
}
