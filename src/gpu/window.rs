//! A binding window's shape, as the kernels' host halves (`wide.rs`, `narrow.rs`) see it to
//! size their grids: shared by them and the layout, which makes the windows.

use crate::plan::AxisMap;

/// An axis after merging, with its view strides in moved words.
#[derive(Debug, Clone, Copy)]
pub(super) struct Axis {
    pub map: AxisMap,
    pub in_stride: u64,
    pub out_stride: u64,
}

/// A window's extent for the kernels' grids: per axis (outermost first) its start and
/// length in the window, with the merged axes.
pub(super) struct WindowShape<'a> {
    /// Per axis, outermost first: the window's start and length.
    pub b: &'a [(usize, usize)],
    /// The merged axes.
    pub axes: &'a [Axis],
    /// `max_compute_workgroups_per_dimension`.
    pub max_groups: u64,
}

impl WindowShape<'_> {
    /// Axes.
    pub fn rank(&self) -> usize {
        self.b.len()
    }

    /// The window's length on axis `d`, innermost first (1 past the rank).
    pub fn len(&self, d: usize) -> u64 {
        if d < self.rank() {
            self.b[self.rank() - 1 - d].1 as u64
        } else {
            1
        }
    }

    /// Positions of the window over the axes above `d`.
    pub fn above(&self, d: usize) -> u64 {
        (d + 1..self.rank()).map(|a| self.len(a)).product()
    }

    /// Elements in the window.
    pub fn elems(&self) -> u64 {
        self.b.iter().map(|&(_, len)| len as u64).product()
    }

    /// The output stride of axis `d`, innermost first, in moved words (0 past the rank).
    pub fn out_stride(&self, d: usize) -> u64 {
        if d < self.rank() {
            self.axes[self.rank() - 1 - d].out_stride
        } else {
            0
        }
    }

    /// Whether axis 0 is a whole unpadded run (a pixel's channels, say), so that rows can
    /// run along axes 0 and 1.
    pub fn inner_is_whole_run(&self) -> bool {
        let inner = &self.axes[self.rank() - 1].map;
        self.rank() >= 2 && inner.is_identity() && self.len(0) == inner.out_len as u64
    }
}
