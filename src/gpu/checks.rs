//! The checks of a pad against the device's limits before any layout, shared by the layouts
//! (`layout`, `backward`, `interior`): the device's own limits, a view's bounds, both views'
//! checks in one order, a view's one binding, and a grid of workgroups. (How many windows a
//! program may take is `window.rs`'s.)

use crate::error::{GpuLimit, PadError, Result, Side};
use crate::plan::PadPlan;

use super::params::{INDEX_LIMIT, MAX_RANK};
use super::program::{BufferView, DeviceLimits};
use super::view::{check_no_self_overlap, invalid, view_strides, Span, View};

/// A `GpuLimit` error.
pub(super) fn limit(limit: GpuLimit, what: String) -> PadError {
    PadError::GpuLimit { limit, what }
}

/// The grid of `groups` workgroups (x first, y when x is full), or a `GpuLimit` naming `count`
/// of `what` where it does not fit the device's grid.
pub(super) fn grid(groups: u64, limits: &DeviceLimits, count: u64, what: &str) -> Result<[u32; 3]> {
    let workgroups = super::kernels::split_grid(groups, limits.max_groups as u64);
    if workgroups[1] as u64 > limits.max_groups as u64 {
        return Err(limit(GpuLimit::IndexRange, format!("{count} {what} need more workgroups than the grid holds")));
    }
    Ok(workgroups)
}

/// The axes a program's uniform holds: a `GpuLimit::Rank` where `rank` axes (`what` they
/// are, after "axes"; formatted only then) are more than [`MAX_RANK`].
pub(super) fn check_rank(rank: usize, what: std::fmt::Arguments) -> Result<()> {
    match rank > MAX_RANK {
        true => Err(limit(GpuLimit::Rank, format!("{rank} axes{what}; the GPU path takes at most {MAX_RANK}"))),
        false => Ok(()),
    }
}

/// An axis's output positions within the shaders' index arithmetic: its length and its mode's
/// `period` under [`INDEX_LIMIT`] (2^31 - 8, where magic division is exact), else a
/// `GpuLimit::IndexRange` naming `axis` (formatted only then).
pub(super) fn check_axis_range(axis: std::fmt::Arguments, out_len: usize, period: u64) -> Result<()> {
    if out_len as u64 + period >= INDEX_LIMIT {
        let what = format!(
            "{axis} has {out_len} output elements and a period of {period}; the GPU path needs their sum under 2^31"
        );
        return Err(limit(GpuLimit::IndexRange, what));
    }
    Ok(())
}

/// A pad's element in bytes: strings and 4-bit types have none on the GPU.
pub(super) fn element_bytes(plan: &PadPlan) -> Result<u64> {
    let bytes = plan.dtype().width().bytes().ok_or_else(|| PadError::Unsupported {
        dtype: plan.dtype().name(),
        reason: "strings and 4-bit types run on the CPU path (cpu::pad, or GpuContext::pad which falls back)".into(),
    })?;
    Ok(bytes as u64)
}

/// A buffer view with its side, for the checks' messages.
pub(super) fn view<'a>(which: Side, v: &BufferView<'a>) -> View<'a> {
    View { which, offset: v.offset, strides: v.strides, end: v.end, buffer_size: v.buffer_size }
}

/// The device's limits a plan must fit whatever the views: an alignment wgpu can bind at,
/// a grid, and tensors within its largest buffer.
pub(super) fn check_device(plan: &PadPlan, limits: &DeviceLimits) -> Result<()> {
    if !limits.storage_alignment.is_power_of_two() {
        return Err(PadError::DeviceUnsupported {
            missing: format!("min_storage_buffer_offset_alignment is {}, not a power of two", limits.storage_alignment),
        });
    }
    if limits.max_groups == 0 {
        return Err(PadError::DeviceUnsupported {
            missing: "max_compute_workgroups_per_dimension is 0, at least 1 needed".into(),
        });
    }
    let (in_bytes, out_bytes) = plan.byte_sizes().unwrap_or((0, 0));
    if in_bytes > limits.max_buffer || out_bytes > limits.max_buffer {
        return Err(limit(
            GpuLimit::BufferSize,
            format!(
                "input of {in_bytes} and output of {out_bytes} bytes; the device's max_buffer_size is {}",
                limits.max_buffer
            ),
        ));
    }
    Ok(())
}

/// A view's element strides and byte span (`None` where empty), as `view_strides` gives them.
pub(super) type ViewLayout = (Vec<u64>, Option<Span>);

/// The checks every program makes of the plan and its two views of `elem`-byte elements, in
/// one order (so that one input gets one error whatever the program): the device's limits,
/// each view inside its buffer, their strides and spans, the written view not overlapping
/// itself where it holds anything. Returns both views' layouts, `read`'s first.
pub(super) fn check_views(
    plan: &PadPlan,
    (read, read_shape): (&View, &[usize]),
    (write, write_shape): (&View, &[usize]),
    elem: u64,
    limits: &DeviceLimits,
) -> Result<(ViewLayout, ViewLayout)> {
    check_device(plan, limits)?;
    for v in [read, write] {
        check_view_bounds(v, limits)?;
    }
    let (read_strides, read_span) = view_strides(read, read_shape, elem)?;
    let (write_strides, write_span) = view_strides(write, write_shape, elem)?;
    if write_span.is_some() {
        check_no_self_overlap(write_shape, &write_strides)?;
    }
    Ok(((read_strides, read_span), (write_strides, write_span)))
}

/// A view's bytes lie inside its buffer, and the buffer within the device's largest: no
/// offset arithmetic past them can overflow.
pub(super) fn check_view_bounds(v: &View, limits: &DeviceLimits) -> Result<()> {
    if v.end > v.buffer_size || v.offset > v.end {
        return Err(invalid(
            v.which,
            format!("its bytes {}..{} are not inside its buffer of {} bytes", v.offset, v.end, v.buffer_size),
        ));
    }
    if v.offset > limits.max_buffer {
        return Err(limit(
            GpuLimit::BufferSize,
            format!(
                "the {} view starts at byte {}; the device's max_buffer_size is {}",
                v.which, v.offset, limits.max_buffer
            ),
        ));
    }
    Ok(())
}

/// A view's binding of its bytes `start..end`, the one rule every program binds by: from the
/// device's alignment down (or `granule`'s, where wider), in whole `granule`-byte words up
/// (WebGPU binds storage in 4-byte words whatever alignment a device reports; rows16 in 16).
/// `Ok(Err(size))` where its `size` bytes are more than `max` or than the device binds: the
/// caller cuts its window. `BufferTooSmall` where it would end past the buffer, an error naming the side
/// where past the last byte an offset can name (a view at the top of the address space, on a
/// device claiming unbounded buffers).
pub(super) fn binding(
    v: &View,
    (start, end): (u64, u64),
    granule: u64,
    max: u64,
    limits: &DeviceLimits,
) -> Result<std::result::Result<(u64, u64), u64>> {
    let align = limits.storage_alignment.max(granule);
    let start = start / align * align;
    let Some(end) = end.checked_next_multiple_of(granule) else {
        return Err(invalid(
            v.which,
            format!(
                "its binding of bytes {start}..{end} (bound in whole {granule}-byte words) would end past byte {}",
                u64::MAX
            ),
        ));
    };
    if end - start > max.min(limits.max_binding) {
        return Ok(Err(end - start));
    }
    if end > v.buffer_size {
        return Err(PadError::BufferTooSmall {
            which: v.which,
            needed: end - v.offset,
            offset: v.offset,
            size: v.buffer_size,
        });
    }
    Ok(Ok((start, end - start)))
}

/// [`binding`] of 4-byte words indexed by u32 (the interior pad's and the gradient's), a
/// `GpuLimit::Windows` where it does not fit, `what` naming the pad and why no window can
/// take it.
pub(super) fn word_binding(v: &View, span: (u64, u64), limits: &DeviceLimits, what: &str) -> Result<(u64, u64)> {
    let max = u32::MAX as u64 * 4;
    binding(v, span, 4, max, limits)?.map_err(|size| {
        let most = max.min(limits.max_binding);
        let why =
            format!("{what}: its {} view needs a binding of {size} bytes; the device binds at most {most}", v.which);
        limit(GpuLimit::Windows, why)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::Program;
    use crate::{DataType, Mode, PadRequest};

    fn limits(max_groups: u32) -> DeviceLimits {
        DeviceLimits { max_binding: 1 << 20, max_buffer: 1 << 30, storage_alignment: 256, max_groups }
    }

    /// An axis's output length and period sum under [`INDEX_LIMIT`] or are refused naming the axis, and
    /// a pad's and a gradient's axes are held to it (their own index ranges: a reflect pad of
    /// 2^30 u8 by 2^30 - 1 a side, a gradient of 2^30 float32 so padded).
    #[test]
    fn axes_past_the_index_range_are_refused_by_name() {
        let limit = INDEX_LIMIT as usize;
        assert!(check_axis_range(format_args!("axis 2"), limit - 4, 3).is_ok());
        let e = check_axis_range(format_args!("axis 2"), limit - 3, 3).unwrap_err();
        assert!(matches!(e, PadError::GpuLimit { limit: GpuLimit::IndexRange, .. }), "{e}");
        assert!(e.to_string().contains(&format!("axis 2 has {} output elements and a period of 3", limit - 3)), "{e}");
        let n = 1usize << 30;
        let huge = DeviceLimits { max_buffer: 1 << 40, ..limits(65535) };
        let pads = PadRequest::new(vec![n as i64 - 1, n as i64 - 1]).mode(Mode::Reflect).max_output_bytes(u64::MAX);
        for (dtype, backward) in [(DataType::Uint8, false), (DataType::Float32, true)] {
            let plan = PadPlan::new(dtype, &[n], &pads).unwrap();
            let (i, o) = plan.byte_sizes().unwrap();
            let e = match backward {
                false => Program::new(&plan, &BufferView::dense(0, i), &BufferView::dense(0, o), &huge),
                true => Program::backward(&plan, &BufferView::dense(0, o), &BufferView::dense(0, i), &huge),
            };
            let e = e.unwrap_err();
            assert!(matches!(e, PadError::GpuLimit { limit: GpuLimit::IndexRange, .. }), "{e}");
            assert!(e.to_string().contains("axis 0") && e.to_string().contains("a period of 2147483646"), "{e}");
        }
        // The rank: 16 axes hold, 17 do not.
        assert!(check_rank(MAX_RANK, format_args!(" of a pad")).is_ok());
        let e = check_rank(MAX_RANK + 1, format_args!(" of a pad")).unwrap_err();
        assert!(e.to_string().contains("17 axes of a pad; the GPU path takes at most 16"), "{e}");
    }

    #[test]
    fn grids_fill_x_then_y_up_to_the_device_limit() {
        assert_eq!(grid(1, &limits(4), 3, "words").unwrap(), [1, 1, 1]);
        assert_eq!(grid(5, &limits(4), 300, "words").unwrap(), [4, 2, 1]);
        assert_eq!(grid(16, &limits(4), 1000, "words").unwrap(), [4, 4, 1]);
        let e = grid(17, &limits(4), 1033, "words").unwrap_err();
        assert!(matches!(e, PadError::GpuLimit { limit: GpuLimit::IndexRange, .. }), "{e}");
        assert!(e.to_string().contains("1033 words need more workgroups"), "{e}");
    }

    /// A tensor past the device's largest buffer is a `GpuLimit::BufferSize` naming both sizes,
    /// whichever side it is (a pad's output, a crop's input); one of exactly that size fits.
    #[test]
    fn tensors_past_the_devices_largest_buffer_are_refused() {
        let plan = |pads: Vec<i64>| PadPlan::new(DataType::Float32, &[16], &PadRequest::new(pads)).unwrap();
        let (grown, cropped) = (plan(vec![2, 2]), plan(vec![-2, -2]));
        for (plan, largest) in [(&grown, 80), (&cropped, 64)] {
            let (i, o) = plan.byte_sizes().unwrap();
            assert_eq!(i.max(o), largest);
            let fits = DeviceLimits { max_buffer: largest, ..limits(65535) };
            assert!(check_device(plan, &fits).is_ok(), "{largest} bytes in a buffer of {largest}");
            let short = DeviceLimits { max_buffer: largest - 1, ..fits };
            let e = check_device(plan, &short).unwrap_err();
            assert!(matches!(e, PadError::GpuLimit { limit: GpuLimit::BufferSize, .. }), "{e}");
            assert!(e.to_string().contains(&format!("input of {i} and output of {o} bytes")), "{e}");
        }
    }

    /// On a device binding any size, an interior pad's bindings may hold up to 2^32 - 1 words
    /// (its shaders index words by u32): a float32 output of 6 GiB is one dispatch.
    #[test]
    fn word_bindings_hold_up_to_u32_words() {
        let request = PadRequest::new(vec![0, 0]).interior(vec![1]).max_output_bytes(u64::MAX);
        let plan = PadPlan::new(DataType::Float32, &[3 << 28], &request).unwrap();
        let (i, o) = plan.byte_sizes().unwrap();
        let unbounded = DeviceLimits { max_binding: u64::MAX, max_buffer: u64::MAX, ..limits(65535) };
        let p = Program::new(&plan, &BufferView::dense(0, i), &BufferView::dense(0, o), &unbounded).unwrap();
        assert_eq!(p.dispatches().len(), 1, "{o} bytes");
        assert_eq!(p.dispatches()[0].output().1, o.next_multiple_of(4));
    }

    #[test]
    fn the_gradient_and_interior_programs_fit_the_devices_grid() {
        // 64 workgroups of 64 lanes: 8 x 8 fits, 7 x 10 does not.
        let reflect =
            PadPlan::new(DataType::Float32, &[64, 64], &PadRequest::new(vec![1, 1, 1, 1]).mode(Mode::Reflect)).unwrap();
        let (i, o) = reflect.byte_sizes().unwrap();
        let backward =
            |g| crate::gpu::backward::whole(&reflect, &BufferView::dense(0, o), &BufferView::dense(0, i), &limits(g));
        assert_eq!(backward(8).unwrap().dispatches()[0].workgroups(), [8, 8, 1]);
        let e = backward(7).unwrap_err();
        assert!(e.to_string().contains("4096 elements need more workgroups"), "{e}");
        // 127 x 127 words: 253 workgroups, 16 x 16 fits, 15 x 17 does not.
        let dilated =
            PadPlan::new(DataType::Float32, &[64, 64], &PadRequest::new(vec![0; 4]).interior(vec![1, 1])).unwrap();
        let (i, o) = dilated.byte_sizes().unwrap();
        let program = |g| Program::new(&dilated, &BufferView::dense(0, i), &BufferView::dense(0, o), &limits(g));
        assert_eq!(program(16).unwrap().dispatches()[0].workgroups(), [16, 16, 1]);
        let e = program(15).unwrap_err();
        assert!(e.to_string().contains("16129 words need more workgroups"), "{e}");
    }
}
