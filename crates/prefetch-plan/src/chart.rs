//! `replay --chart out.svg`: hit ratio against capacity, on a log scale,
//! with plotters' SVG backend (the plotting crate criterion uses): one line
//! per ratio kind (blocks, tokens, mean per request) for one eviction
//! setting, or, when the sweep compares policies or LMCache triggers, one
//! line of the block hit ratio per setting (as Mooncake's Fig. 9 compares
//! capacities).

use std::path::Path;

use kv_replay::Report;
use plotters::prelude::*;

use crate::error::CliError;

/// One line's points: per capacity (in blocks), the three hit ratios
/// (blocks, tokens, mean per request).
pub type Points = Vec<(f64, [f64; 3])>;

/// A chart's data: the swept tier's name, and one series per eviction
/// setting (its label, e.g. `arc` or `lru wm 0.8 ratio 0.2`, and its
/// points), in the order the sweep first gives each setting.
pub type ChartPoints = (String, Vec<(String, Points)>);

/// A report's eviction setting, as a line's label.
fn setting(report: &Report) -> String {
    let mut label = report.eviction.to_owned();
    if let (Some(watermark), Some(ratio)) = (report.l1.watermark, report.l1.evict_ratio) {
        label.push_str(&format!(" wm {watermark} ratio {ratio}"));
    }
    for (j, tier) in report.l2.iter().enumerate() {
        if let (Some(watermark), Some(ratio)) = (tier.watermark, tier.evict_ratio) {
            label.push_str(&format!(" L2 {j} wm {watermark} ratio {ratio}"));
        }
    }
    label
}

/// The swept tier's capacity and the three ratios of each report with a
/// finite, non-zero capacity there (a log axis has no room for 0 or
/// `inf`), sorted by capacity, one series per eviction setting.
///
/// # Errors
///
/// [`CliError::BadOption`] unless exactly one tier's capacity varies over
/// at least two plottable points.
pub fn points(reports: &[Report]) -> Result<ChartPoints, CliError> {
    let bad = |message: &str| CliError::BadOption { option: "--chart", message: message.to_owned() };
    let Some(first) = reports.first() else { return Err(bad("nothing was replayed")) };
    let capacity_of = |report: &Report, tier: usize| {
        if tier == 0 { report.l1.capacity_blocks } else { report.l2[tier - 1].capacity_blocks }
    };
    let varying: Vec<usize> = (0..=first.l2.len())
        .filter(|&tier| reports.iter().any(|report| capacity_of(report, tier) != capacity_of(first, tier)))
        .collect();
    let [tier] = varying[..] else {
        return Err(bad("the chart plots a sweep of one tier's capacity (--l1 1e3,1e4,... or one --l2)"));
    };
    let mut series: Vec<(String, Points)> = Vec::new();
    for report in reports {
        let label = setting(report);
        let index = match series.iter().position(|(known, _)| *known == label) {
            Some(index) => index,
            None => {
                series.push((label, Vec::new()));
                series.len() - 1
            }
        };
        if let Some(blocks) = capacity_of(report, tier).filter(|&blocks| blocks > 0) {
            let ratio = &report.hit_ratio;
            series[index].1.push((blocks as f64, [ratio.block, ratio.token, ratio.request_mean]));
        }
    }
    if series.iter().any(|(_, points)| points.len() < 2) {
        return Err(bad("a chart needs at least two finite, non-zero capacities"));
    }
    for (_, points) in &mut series {
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let name = if tier == 0 { "L1".to_owned() } else { format!("L2 adapter {}", tier - 1) };
    Ok((name, series))
}

/// Line colours, one per series, cycled.
const COLORS: [RGBColor; 8] = [
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x17, 0xbe, 0xcf),
];

/// Draws the chart of `reports` into the SVG file at `path`.
///
/// # Errors
///
/// As [`points`]; [`CliError::Io`] if the file cannot be written.
pub fn draw(path: &Path, reports: &[Report]) -> Result<(), CliError> {
    let (tier, series) = points(reports)?;
    let failed = |error: String| CliError::Io {
        context: format!("drawing {}", path.display()),
        source: std::io::Error::other(error),
    };
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(|error| failed(error.to_string()))?;
    let low = series.iter().map(|(_, points)| points[0].0).fold(f64::INFINITY, f64::min);
    let high = series.iter().map(|(_, points)| points[points.len() - 1].0).fold(0.0, f64::max);
    let caption = if series.len() == 1 {
        format!("hit ratio against {tier} capacity")
    } else {
        format!("block hit ratio against {tier} capacity, by eviction")
    };
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(56)
        .build_cartesian_2d((low..high).log_scale(), 0.0..1.0)
        .map_err(|error| failed(error.to_string()))?;
    chart
        .configure_mesh()
        .x_desc(format!("{tier} capacity (blocks)"))
        .y_desc("hit ratio")
        .x_label_formatter(&|blocks| format!("{blocks:e}"))
        .draw()
        .map_err(|error| failed(error.to_string()))?;
    // One setting: its three ratios; several: each one's block ratio.
    let lines: Vec<(String, usize, &Points)> = match &series[..] {
        [(_, points)] => ["blocks (Σh / Σn)", "tokens", "mean per request"]
            .into_iter()
            .enumerate()
            .map(|(kind, label)| (label.to_owned(), kind, points))
            .collect(),
        _ => series.iter().map(|(label, points)| (label.clone(), 0, points)).collect(),
    };
    for (index, (label, kind, points)) in lines.into_iter().enumerate() {
        let color = COLORS[index % COLORS.len()];
        let line = points.iter().map(move |&(x, ratios)| (x, ratios[kind]));
        chart
            .draw_series(LineSeries::new(line.clone(), color.stroke_width(2)))
            .map_err(|error| failed(error.to_string()))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        chart
            .draw_series(line.map(|point| Circle::new(point, 3, color.filled())))
            .map_err(|error| failed(error.to_string()))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()
        .map_err(|error| failed(error.to_string()))?;
    root.present().map_err(|error| failed(error.to_string()))
}

#[cfg(test)]
mod tests {
    use kv_replay::{Eviction, ReplayConfig, Trace, Trigger, sweep};

    use super::*;

    fn reports(l1: &[Option<usize>], l2: &[Option<usize>]) -> Vec<Report> {
        let mut trace = Trace::new(512);
        for keys in [&[1, 2, 3][..], &[1, 2, 4], &[5, 1, 2, 3]] {
            trace.push(keys, keys.len() as u64 * 512);
        }
        let base = ReplayConfig::new(None, &[None]);
        let configs = sweep::combinations(&base, l1, &[l2.to_vec()]);
        sweep::replay_all(&trace, &configs).unwrap()
    }

    #[test]
    fn one_tier_must_vary() {
        let (tier, series) = points(&reports(&[Some(4), None, Some(0), Some(1)], &[None])).unwrap();
        let capacities: Vec<f64> = series[0].1.iter().map(|p| p.0).collect();
        assert_eq!((tier.as_str(), series.len(), series[0].0.as_str(), capacities), ("L1", 1, "lru", vec![1.0, 4.0]));
        let (tier, _) = points(&reports(&[Some(1)], &[Some(2), Some(8)])).unwrap();
        assert_eq!(tier, "L2 adapter 0");
        assert!(points(&reports(&[Some(1), Some(2)], &[Some(2), Some(8)])).is_err());
        assert!(points(&reports(&[Some(1), None], &[None])).is_err());
    }

    #[test]
    fn one_line_per_eviction_setting() {
        let mut trace = Trace::new(512);
        for (t, keys) in [&[1, 2, 3][..], &[1, 2, 4], &[5, 1, 2, 3], &[6, 7]].into_iter().enumerate() {
            trace.push_timed(keys, keys.len() as u64 * 512, t as u64 * 700);
        }
        let mut configs = Vec::new();
        for (eviction, trigger) in
            [(Eviction::Lru, None), (Eviction::Arc, None), (Eviction::Lru, Some(Trigger::LMCACHE_DEFAULT))]
        {
            let mut base = ReplayConfig::new(None, &[]);
            base.eviction = eviction;
            base.l1_trigger = trigger;
            configs.extend(sweep::combinations(&base, &[Some(1), Some(2), Some(4)], &[]));
        }
        let (_, series) = points(&sweep::replay_all(&trace, &configs).unwrap()).unwrap();
        let labels: Vec<&str> = series.iter().map(|(label, _)| label.as_str()).collect();
        assert_eq!(labels, ["lru", "arc", "lru wm 0.8 ratio 0.2"]);
        assert!(series.iter().all(|(_, points)| points.len() == 3));
        let path = std::env::temp_dir().join(format!("prefetch-plan-chart-policies-{}.svg", std::process::id()));
        draw(&path, &sweep::replay_all(&trace, &configs).unwrap()).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(svg.contains("by eviction") && svg.contains("lru wm 0.8 ratio 0.2"), "{}", &svg[..300]);
    }

    #[test]
    fn draws_an_svg() {
        let path = std::env::temp_dir().join(format!("prefetch-plan-chart-{}.svg", std::process::id()));
        draw(&path, &reports(&[Some(1), Some(2), Some(4)], &[None])).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("hit ratio against L1 capacity"), "{}", &svg[..200]);
    }
}
