//! Outputs: the table, the SVG chart, CSV and Markdown.

use crate::measure::Record;

pub fn case_name(r: &Record) -> String {
    let shape: Vec<String> = r.shape.iter().map(|d| d.to_string()).collect();
    let direction = if r.backward { " backward" } else { "" };
    let interior = match r.interior.is_empty() {
        true => String::new(),
        false => format!(" interior {:?}", r.interior),
    };
    format!("{} [{}] {}{interior}{direction}", r.dtype, shape.join(","), r.mode)
}

/// The table's columns: (header, width, decimals, value).
type TableColumn = (&'static str, usize, usize, fn(&Record) -> f64);

const TABLE: [TableColumn; 23] = [
    ("out MiB", 8, 2, |r| r.out_bytes as f64 / (1 << 20) as f64),
    ("cpu ms", 8, 3, |r| r.cpu_ms),
    ("fresh ms", 8, 3, |r| r.cpu_fresh_ms),
    ("fr/cpu", 7, 2, |r| r.cpu_fresh_over_cpu),
    ("arena ms", 8, 3, |r| r.cpu_arena_ms),
    ("ar/cpu", 7, 2, |r| r.cpu_arena_over_cpu),
    ("memcpy", 8, 3, |r| r.memcpy_ms),
    ("cpu/mc", 7, 2, |r| r.cpu_over_memcpy),
    ("kernel ms", 9, 4, |r| r.gpu_kernel_ms),
    ("kb ms", 8, 4, |r| batch(r, "gpu_kernel_batch_ms")),
    ("roof ms", 8, 4, |r| r.gpu_roofline_ms),
    ("kb/roof", 7, 2, |r| r.gpu_kernel_over_roofline),
    ("copyb ms", 8, 4, |r| batch(r, "gpu_copy_batch_ms")),
    ("kb/copyb", 8, 2, |r| r.gpu_kernel_over_gpu_copy),
    ("kb GB/s", 8, 1, |r| r.gpu_kernel_gbps),
    ("e2e pool", 9, 2, |r| r.gpu_e2e_pooled_ms),
    ("e2e new", 9, 2, |r| r.gpu_e2e_fresh_ms),
    ("pool/t", 7, 2, |r| r.gpu_e2e_pooled_over_kernel_and_copies),
    ("k wall", 9, 3, |r| r.gpu_kernel_wall_ms),
    ("pool/kw", 7, 2, |r| r.gpu_e2e_pooled_over_kernel_wall),
    ("speedup", 8, 2, |r| r.gpu_speedup_over_cpu),
    // --backward: the gradient over the forward pad of the same case (NaN for a pad).
    ("kb/fwd", 7, 2, |r| batch(r, "gpu_kernel_batch_over_forward")),
    ("cpu/fwd", 7, 2, |r| batch(r, "cpu_over_forward")),
];

/// A steady figure kept among the extra ones (NaN in reports without it).
fn batch(r: &Record, name: &str) -> f64 {
    r.extra.get(name).copied().unwrap_or(f64::NAN)
}

/// The table: `kb` is the kernel at steady clocks (a batch, per dispatch), `roof` the
/// roofline copy timed the same way, `copyb` the buffer copy's batch.
pub fn print_table(records: &[Record]) {
    let mut line = format!("{:<34}", "case");
    for (name, width, _, _) in TABLE {
        line += &format!(" {name:>width$}");
    }
    println!("{line}");
    for r in records {
        let noisy = if r.noisy.is_empty() { "" } else { " *" };
        let mut line = format!("{:<34}", format!("{}{noisy}", case_name(r)));
        for (_, width, decimals, value) in TABLE {
            line += &format!(" {:>width$.decimals$}", value(r));
        }
        println!("{line}");
    }
}

/// The bar chart of GB/s per case, as SVG text.
pub fn svg(records: &[Record]) -> Result<String, Box<dyn std::error::Error>> {
    use plotters::prelude::*;
    let mut text = String::new();
    // Outputs under 1 MiB measure fixed costs, not bandwidth: their GB/s would set the scale.
    let records: Vec<Record> = records.iter().filter(|r| r.out_bytes >= 1 << 20).cloned().collect();
    let records = &records[..];
    type Series = (&'static str, RGBColor, fn(&Record) -> f64);
    let series: [Series; 9] = [
        ("CPU pad into a preallocated output", RGBColor(66, 133, 244), |r| r.cpu_gbps),
        ("CPU pad, output allocated (cpu::pad)", RGBColor(30, 80, 170), |r| r.cpu_fresh_gbps),
        ("CPU pad, output from an arena (cpu::pad_in)", RGBColor(100, 60, 160), |r| r.cpu_arena_gbps),
        ("host memcpy", RGBColor(160, 190, 240), |r| r.memcpy_gbps),
        ("GPU pad kernel, steady clocks", RGBColor(219, 68, 55), |r| r.gpu_kernel_gbps),
        ("GPU roofline copy shader (16-byte words)", RGBColor(245, 150, 60), |r| r.gpu_roofline_gbps),
        ("GPU buffer copy, steady clocks", RGBColor(240, 170, 160), |r| r.gpu_copy_gbps),
        ("GPU end to end, pooled buffers", RGBColor(15, 157, 88), |r| r.gpu_e2e_pooled_gbps),
        ("GPU end to end, new buffers", RGBColor(140, 210, 160), |r| r.gpu_e2e_fresh_gbps),
    ];
    let top = records.iter().flat_map(|r| series.iter().map(move |s| (s.2)(r))).fold(0.0, f64::max) * 1.1;
    // Empty rows below the last case hold the legend, so it covers no bar.
    let legend_rows = 3;
    let height = 160 + 26 * 4 * (records.len() + legend_rows) as u32;
    let root = SVGBackend::with_string(&mut text, (1000, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let title = format!(
        "Pad throughput, GB/s moved (read + written), outputs of 1 MiB and more (GPU: {})",
        records.first().map_or("", |r| r.adapter.as_str())
    );
    let n = records.len() as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(260)
        .build_cartesian_2d(0.0..top.max(0.001), (n + legend_rows as f64)..0.0)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels((records.len() + legend_rows) * 2 + 1)
        .y_label_formatter(&|y| {
            let i = (*y - 0.5).round();
            if (y - 0.5 - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < records.len() {
                case_name(&records[i as usize])
            } else {
                String::new()
            }
        })
        .x_desc("bytes read and written per second, GB/s (higher is faster)")
        .draw()?;
    for (k, (name, color, value)) in series.iter().enumerate() {
        let color = *color;
        chart
            .draw_series(records.iter().enumerate().map(|(i, r)| {
                let y0 = i as f64 + 0.05 + k as f64 * 0.1;
                Rectangle::new([(0.0, y0), (value(r), y0 + 0.09)], color.filled())
            }))?
            .label(*name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    drop(chart);
    drop(root);
    Ok(text)
}

/// The columns of the CSV and Markdown outputs: (header, value).
/// A named column of a record.
type Column = (&'static str, fn(&Record) -> f64);

const COLUMNS: [Column; 15] = [
    ("out_bytes", |r| r.out_bytes as f64),
    ("bytes_moved", |r| r.bytes_moved as f64),
    ("cpu_ms", |r| r.cpu_ms),
    ("cpu_fresh_ms", |r| r.cpu_fresh_ms),
    ("cpu_arena_ms", |r| r.cpu_arena_ms),
    ("memcpy_ms", |r| r.memcpy_ms),
    ("gpu_kernel_ms", |r| r.gpu_kernel_ms),
    ("gpu_copy_ms", |r| r.gpu_copy_ms),
    ("gpu_roofline_ms", |r| r.gpu_roofline_ms),
    ("gpu_e2e_pooled_ms", |r| r.gpu_e2e_pooled_ms),
    ("gpu_e2e_fresh_ms", |r| r.gpu_e2e_fresh_ms),
    ("gpu_kernel_over_gpu_copy", |r| r.gpu_kernel_over_gpu_copy),
    ("gpu_kernel_over_roofline", |r| r.gpu_kernel_over_roofline),
    ("gpu_kernel_gbps", |r| r.gpu_kernel_gbps),
    ("gpu_roofline_gbps", |r| r.gpu_roofline_gbps),
];

/// One row per case: the case, the columns above, and every extra figure (intervals, MAD,
/// the model's) in a fixed order.
pub fn csv(records: &[Record]) -> String {
    let extra: std::collections::BTreeSet<&String> = records.iter().flat_map(|r| r.extra.keys()).collect();
    let mut out = String::from("case");
    for (name, _) in COLUMNS {
        out += &format!(",{name}");
    }
    for k in &extra {
        out += &format!(",{k}");
    }
    out += ",noisy\n";
    for r in records {
        out += &format!("\"{}\"", case_name(r));
        for (_, value) in COLUMNS {
            out += &format!(",{}", value(r));
        }
        for k in &extra {
            out += &r.extra.get(*k).map_or(",".to_string(), |v| format!(",{v}"));
        }
        out += &format!(",\"{}\"\n", r.noisy.join(" "));
    }
    out
}

/// The table as Markdown, under the machine's summary.
pub fn markdown(machine: &crate::machine::Machine, records: &[Record]) -> String {
    let mut out = format!("Machine: {}\n\n| case |", machine.summary());
    for (name, _) in COLUMNS {
        out += &format!(" {name} |");
    }
    out += " noisy |\n|---|";
    out += &"---|".repeat(COLUMNS.len() + 1);
    out += "\n";
    for r in records {
        out += &format!("| {} |", case_name(r));
        for (_, value) in COLUMNS {
            out += &format!(" {:.4} |", value(r));
        }
        out += &format!(" {} |\n", r.noisy.join(", "));
    }
    out
}
