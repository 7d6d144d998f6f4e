//! The checks of a pad against the device's limits before any layout, shared by the layouts
//! (`layout`, `backward`, `interior`): the device's own limits, a view's bounds, and a view's
//! one binding.

use crate::error::{GpuLimit, PadError, Result, Side};
use crate::plan::PadPlan;

use super::program::{BufferView, DeviceLimits};
use super::view::{invalid, View};

/// A `GpuLimit` error.
pub(super) fn limit(limit: GpuLimit, what: String) -> PadError {
    PadError::GpuLimit { limit, what }
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

/// A view's one binding: its span from an aligned start, in whole words; offsets within it
/// in elements. A `GpuLimit` where it does not fit the device's bindings, `what` naming the
/// pad and why no window can take it.
pub(super) fn binding(v: &View, (start, end): (u64, u64), limits: &DeviceLimits, what: &str) -> Result<(u64, u64)> {
    let align = limits.storage_alignment.max(4);
    let start = start / align * align;
    let size = end.next_multiple_of(4) - start;
    let max = limits.max_binding.min(u32::MAX as u64 * 4);
    if size > max || end.next_multiple_of(4) > v.buffer_size {
        return match size > max {
            true => Err(limit(
                GpuLimit::Windows,
                format!("{what}: its {} view needs a binding of {size} bytes; the device binds at most {max}", v.which),
            )),
            false => Err(PadError::BufferTooSmall {
                which: v.which,
                needed: end.next_multiple_of(4) - v.offset,
                offset: v.offset,
                size: v.buffer_size,
            }),
        };
    }
    Ok((start, size))
}
