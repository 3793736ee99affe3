//! The PNG chart: success rate (up) against tokens per successful task
//! (right), one mark per exposure with its 95 % interval as a vertical bar:
//! meta a blue circle, direct an orange square, scoped a green triangle.
//! plotters draws into an RGB buffer without fonts (as fitness's weight
//! chart does), so the figures themselves are in the markdown and JSON.

use plotters::prelude::*;

use super::report::Report;
use super::runner::Mode;

const WIDTH: u32 = 640;
const HEIGHT: u32 = 400;

/// The chart as PNG bytes.
pub fn png(report: &Report) -> Result<Vec<u8>, String> {
    let points: Vec<(Mode, f64, f64, f64, f64)> = report
        .modes
        .iter()
        .map(|m| {
            let f = report.mode(*m);
            (*m, f.tokens_per_success.unwrap_or(0.0), f.success_rate, f.ci_low, f.ci_high)
        })
        .collect();
    let max_x = points.iter().map(|p| p.1).fold(0.0, f64::max).max(1.0) * 1.15;
    let mut rgb = vec![255u8; (WIDTH * HEIGHT * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut chart = ChartBuilder::on(&root)
            .margin(24)
            .build_cartesian_2d(0f64..max_x, -0.02f64..1.02)
            .map_err(|e| e.to_string())?;
        let grid = RGBColor(225, 228, 234);
        for i in 0..=4 {
            let y = f64::from(i) / 4.0;
            chart.draw_series(LineSeries::new([(0.0, y), (max_x, y)], grid)).map_err(|e| e.to_string())?;
            let x = max_x * f64::from(i) / 4.0;
            chart.draw_series(LineSeries::new([(x, 0.0), (x, 1.0)], grid)).map_err(|e| e.to_string())?;
        }
        let axis = RGBColor(90, 96, 110);
        chart
            .draw_series(LineSeries::new([(0.0, 1.0), (0.0, 0.0), (max_x, 0.0)], axis.stroke_width(2)))
            .map_err(|e| e.to_string())?;
        for (mode, x, y, low, high) in points {
            let color = match mode {
                Mode::Meta => RGBColor(37, 99, 235),
                Mode::Direct => RGBColor(234, 88, 12),
                Mode::Scoped => RGBColor(22, 163, 74),
            };
            chart
                .draw_series(LineSeries::new([(x, low), (x, high)], color.stroke_width(2)))
                .map_err(|e| e.to_string())?;
            let style = color.filled();
            match mode {
                Mode::Meta => chart.draw_series([Circle::new((x, y), 8, style)]).map(|_| ()),
                Mode::Direct => chart
                    .draw_series([EmptyElement::at((x, y)) + Rectangle::new([(-8, -8), (8, 8)], style)])
                    .map(|_| ()),
                Mode::Scoped => chart.draw_series([TriangleMarker::new((x, y), 10, style)]).map(|_| ()),
            }
            .map_err(|e| e.to_string())?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, WIDTH, HEIGHT);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
    writer.write_image_data(&rgb).map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())?;
    Ok(out)
}
