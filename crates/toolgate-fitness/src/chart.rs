//! `render_weight_chart`: the weight trend of a date range as a PNG, beside
//! the numbers it shows. It reads through `query_body_data` (the caller's
//! own token, the same API) and draws with plotters into an RGB buffer: no
//! fonts and no system libraries, so the picture has no text; the numbers
//! (first, last, lowest, highest, change) travel in the structured result.

use std::sync::Arc;

use chrono::NaiveDate;
use plotters::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolgate_core::{
    Effect, ErrorCode, FieldError, Image, Tool, ToolContext, ToolError, ToolOutput, ToolResult, ToolSpec,
};

/// The tool's name.
pub(crate) const NAME: &str = "render_weight_chart";
const WIDTH: u32 = 640;
const HEIGHT: u32 = 320;

/// Parameters of `render_weight_chart`.
#[derive(Debug, Deserialize, JsonSchema)]
struct Range {
    /// First day, inclusive, YYYY-MM-DD, e.g. 2026-03-01.
    #[schemars(with = "String", regex(pattern = toolgate_schema::DATE_PATTERN), extend("format" = "date"))]
    from: NaiveDate,
    /// Last day, inclusive, YYYY-MM-DD, e.g. 2026-03-31; not before `from`.
    #[schemars(with = "String", regex(pattern = toolgate_schema::DATE_PATTERN), extend("format" = "date"))]
    to: NaiveDate,
}

const DESCRIPTION: &str = "Draw the caller's weight trend over a date range as a PNG chart (a line through each recorded day). \
Use it when the user wants to see their weight over time. Returns the image beside \
{points, first_kg, last_kg, min_kg, max_kg, change_kg}; days without a weight are skipped, \
a range with none is NOT_FOUND. Example: {\"from\": \"2026-03-01\", \"to\": \"2026-03-31\"}.";

/// The chart tool, reading through `query_body_data` (`query`).
pub(crate) fn tool(query: Arc<dyn Tool>) -> Arc<dyn Tool> {
    let spec = ToolSpec::new(NAME, DESCRIPTION, json!({}))
        .with_effect(Effect::Read)
        .with_domain("body")
        .with_role(query.spec().required_role.clone())
        .with_timeout(query.spec().timeout)
        .with_tags(["fitness", "body", "weight", "chart"])
        .with_example("Weight trend of March", json!({"from": "2026-03-01", "to": "2026-03-31"}));
    let chart = toolgate_schema::tool_fn(spec, move |ctx: ToolContext, range: Range| {
        let query = query.clone();
        async move { render(query.as_ref(), &ctx, range).await }
    })
    .with_rules(|range: &Range| {
        (range.to < range.from)
            .then(|| {
                FieldError::new(
                    "/to",
                    "a date on or after from",
                    &json!(range.to.to_string()),
                    format!(
                        "`to` {} is before `from` {}; the range must end on or after it starts",
                        range.to, range.from
                    ),
                )
            })
            .into_iter()
            .collect()
    });
    Arc::new(chart)
}

async fn render(query: &dyn Tool, ctx: &ToolContext, range: Range) -> ToolResult {
    let (from, to) = (range.from.to_string(), range.to.to_string());
    let listed = query.call(ctx, json!({"op": "list_measurements", "from": from, "to": to})).await?;
    let body = match listed.payload {
        toolgate_core::Payload::Json(value) => value,
        toolgate_core::Payload::Text(text) => serde_json::from_str(&text).unwrap_or(Value::Null),
    };
    // The route tool answers `{"payload": <the API's body>, ...}`.
    let points: Vec<(usize, f64)> = body.get("payload").unwrap_or(&body)["measurements"]
        .as_array()
        .map(|rows| rows.iter().filter_map(|r| r["weight_kg"].as_f64()).enumerate().collect())
        .unwrap_or_default();
    if points.is_empty() {
        return Err(ToolError::new(
            ErrorCode::NotFound,
            format!("no weight is recorded between {from} and {to}; ask for another range"),
        ));
    }
    // A drawing failure is a bug of ours, not something the model can fix.
    let png = draw(&points).map_err(|_| ToolError::internal())?;
    let weights: Vec<f64> = points.iter().map(|p| p.1).collect();
    let (first, last) = (weights[0], weights[weights.len() - 1]);
    let min = weights.iter().copied().fold(f64::INFINITY, f64::min);
    let max = weights.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let result = json!({
        "from": from, "to": to, "points": weights.len(),
        "first_kg": first, "last_kg": last, "min_kg": min, "max_kg": max,
        "change_kg": ((last - first) * 10.0).round() / 10.0,
    });
    Ok(ToolOutput::json(result).with_image(Image::png(&png)))
}

/// The chart as PNG bytes: a light grid, the weight line and a dot per day.
fn draw(points: &[(usize, f64)]) -> Result<Vec<u8>, String> {
    let mut rgb = vec![255u8; (WIDTH * HEIGHT * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let low = points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min) - 1.0;
        let high = points.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max) + 1.0;
        let last = points.len().saturating_sub(1).max(1) as f64;
        let mut chart = ChartBuilder::on(&root)
            .margin(16)
            .build_cartesian_2d(0f64..last, low..high)
            .map_err(|e| e.to_string())?;
        let grid = RGBColor(225, 228, 234);
        for i in 0..=4 {
            let y = low + (high - low) * f64::from(i) / 4.0;
            chart.draw_series(LineSeries::new([(0.0, y), (last, y)], grid)).map_err(|e| e.to_string())?;
        }
        let line = RGBColor(37, 99, 235);
        let series = points.iter().map(|&(i, w)| (i as f64, w));
        chart
            .draw_series(LineSeries::new(series.clone(), line.stroke_width(3)))
            .map_err(|e| e.to_string())?;
        chart.draw_series(series.map(|p| Circle::new(p, 4, line.filled()))).map_err(|e| e.to_string())?;
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
