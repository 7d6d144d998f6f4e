//! Where does the GPU start to win? One family of pads over output sizes from 4 KiB up in
//! steps of 4x, every path measured at each size; per path a fit of
//! `t = fixed + bytes / bandwidth` (the bandwidth from the slope over outputs of 1 MiB and
//! more, the fixed cost from the smallest) and the crossover: the smallest size where the GPU end to end beats the CPU path.

use serde::Serialize;
use wgpu_pad::{DataType, Mode};

use crate::measure::Record;

/// The paths a sweep reports, as (name, the record's column).
/// A named path and the record's column holding it.
pub type Path = (&'static str, fn(&Record) -> f64);

pub const PATHS: [Path; 7] = [
    ("cpu_pad_into", |r| r.cpu_ms),
    ("cpu_pad_fresh", |r| r.cpu_fresh_ms),
    ("cpu_pad_arena", |r| r.cpu_arena_ms),
    ("memcpy", |r| r.memcpy_ms),
    ("gpu_kernel", |r| r.gpu_kernel_ms),
    ("gpu_roofline", |r| r.gpu_roofline_ms),
    ("gpu_end_to_end_pooled", |r| r.gpu_e2e_pooled_ms),
];

/// Output sizes from 4 KiB in steps of 4x up to `max` (at least one).
pub fn sizes(max: u64) -> Vec<u64> {
    let mut v = vec![4096u64];
    while v.last().unwrap() * 4 <= max {
        v.push(v.last().unwrap() * 4);
    }
    v
}

/// The family's case near `bytes` of output: `shape` with its first axis scaled (at least 1),
/// its pads as given.
pub fn shape_for(dtype: DataType, shape: &[usize], pads: &[i64], bytes: u64) -> Vec<usize> {
    let rank = shape.len();
    let elem = dtype.width().bytes().unwrap_or(1) as u64;
    let out: Vec<u64> = (0..rank).map(|d| (shape[d] as i64 + pads[d] + pads[d + rank]).max(1) as u64).collect();
    let rest: u64 = out[1..].iter().product::<u64>().max(1) * elem;
    // Rounded up, so a size's output is at least its nominal bytes (the fit's threshold).
    let first_out = bytes.div_ceil(rest).max(1) as i64;
    let mut s = shape.to_vec();
    s[0] = (first_out - pads[0] - pads[rank]).max(1) as usize;
    s
}

/// The default family of a mode: f32 rows of 256 (+2), padded by 1 on both axes.
pub fn default_family(mode: Mode) -> (DataType, Vec<usize>, Vec<i64>, Mode) {
    (DataType::Float32, vec![64, 256], vec![1, 1, 1, 1], mode)
}

#[derive(Serialize, Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    pub fixed_us: f64,
    pub gbps: f64,
    /// How many sizes the fit used.
    pub points: usize,
}

/// Sizes whose slope gives the bandwidth: at least this many output bytes.
pub const BANDWIDTH_FROM_BYTES: u64 = 1 << 20;

/// `ms = fixed + bytes / bandwidth`: the bandwidth from the least-squares slope over the
/// sizes of [`BANDWIDTH_FROM_BYTES`] and more (all sizes where fewer than two are), the
/// fixed cost from the smallest size, less its bytes at that bandwidth (at least 0). A fit
/// of both over the large sizes alone lets their noise swing the intercept by milliseconds;
/// one over every size takes cache-resident speeds for the bandwidth. `None` with fewer
/// than two points.
pub fn fit(points: &[(u64, f64)]) -> Option<Fit> {
    let large: Vec<(f64, f64)> =
        points.iter().filter(|p| p.0 >= BANDWIDTH_FROM_BYTES).map(|&(b, t)| (b as f64, t)).collect();
    let used: Vec<(f64, f64)> =
        if large.len() >= 2 { large } else { points.iter().map(|&(b, t)| (b as f64, t)).collect() };
    if used.len() < 2 {
        return None;
    }
    let n = used.len() as f64;
    let (mx, my) = (used.iter().map(|p| p.0).sum::<f64>() / n, used.iter().map(|p| p.1).sum::<f64>() / n);
    let sxx: f64 = used.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = used.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    if sxx == 0.0 || sxy <= 0.0 {
        return None;
    }
    let ms_per_byte = sxy / sxx;
    let &(b0, t0) = points.iter().min_by_key(|p| p.0)?;
    let fixed_ms = (t0 - b0 as f64 * ms_per_byte).max(0.0);
    Some(Fit { fixed_us: fixed_ms * 1e3, gbps: 1.0 / ms_per_byte / 1e6, points: used.len() })
}

/// The smallest output size where `gpu` beats `cpu` (time per size, sizes ascending).
pub fn crossover(sizes: &[u64], cpu: &[f64], gpu: &[f64]) -> Option<u64> {
    sizes.iter().zip(cpu.iter().zip(gpu)).find(|(_, (c, g))| g < c).map(|(s, _)| *s)
}

/// A log-log chart: time per path against output bytes, the crossover marked.
pub fn svg(
    title: &str,
    sizes: &[u64],
    series: &[(&str, Vec<f64>)],
    crossover: Option<u64>,
) -> Result<String, Box<dyn std::error::Error>> {
    use plotters::prelude::*;
    let mut text = String::new();
    let root = SVGBackend::with_string(&mut text, (1000, 640)).into_drawing_area();
    root.fill(&WHITE)?;
    let all = series.iter().flat_map(|s| s.1.iter().copied()).filter(|t| *t > 0.0);
    let (lo, hi) = all.fold((f64::MAX, 0.0f64), |(l, h), t| (l.min(t), h.max(t)));
    let (x0, x1) = (*sizes.first().unwrap_or(&4096) as f64, *sizes.last().unwrap_or(&4096) as f64 * 1.5);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d((x0..x1).log_scale(), (lo.max(1e-6) / 1.5..hi.max(1e-5) * 1.5).log_scale())?;
    chart.configure_mesh().x_desc("output bytes").y_desc("ms (lower is faster)").draw()?;
    let colors = [RED, BLUE, GREEN, MAGENTA, CYAN, BLACK, RGBColor(240, 140, 0)];
    for (i, (name, times)) in series.iter().enumerate() {
        let color = colors[i % colors.len()];
        let pts: Vec<(f64, f64)> =
            sizes.iter().zip(times).filter(|p| *p.1 > 0.0).map(|(&s, &t)| (s as f64, t)).collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?
            .label(*name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2)));
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
    }
    if let Some(c) = crossover {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(c as f64, lo.max(1e-6) / 1.5), (c as f64, hi.max(1e-5) * 1.5)],
            BLACK.stroke_width(1),
        )))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    drop(chart);
    drop(root);
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fit_recovers_a_known_fixed_cost_and_bandwidth() {
        // 25 us fixed, 10 GB/s = 1e7 bytes per ms.
        let points: Vec<(u64, f64)> = sizes(256 << 20).iter().map(|&b| (b, 0.025 + b as f64 / 1e7)).collect();
        let f = fit(&points).unwrap();
        assert!((f.fixed_us - 25.0).abs() < 1e-6, "{f:?}");
        assert!((f.gbps - 10.0).abs() < 1e-9, "{f:?}");
        assert_eq!(f.points, 5, "the slope from 1 MiB to 256 MiB");
        // Noise of 10 % on the largest size moves the bandwidth, not the fixed cost by
        // milliseconds.
        let mut noisy = points.clone();
        noisy.last_mut().unwrap().1 *= 1.1;
        let f = fit(&noisy).unwrap();
        assert!((f.fixed_us - 25.0).abs() < 1.0 && f.gbps > 9.0 && f.gbps < 10.0, "{f:?}");
        assert_eq!(fit(&points[..1]), None);
    }

    #[test]
    fn crossovers_and_sizes() {
        assert_eq!(sizes(1 << 20), vec![4096, 16384, 65536, 262144, 1048576]);
        assert_eq!(crossover(&[1, 2, 3], &[1.0, 2.0, 3.0], &[5.0, 1.5, 1.0]), Some(2));
        assert_eq!(crossover(&[1, 2], &[1.0, 2.0], &[5.0, 5.0]), None);
        let s = shape_for(DataType::Float32, &[64, 256], &[1, 1, 1, 1], 1 << 20);
        assert_eq!(s, vec![(1usize << 20).div_ceil(258 * 4) - 2, 256]);
    }
}
