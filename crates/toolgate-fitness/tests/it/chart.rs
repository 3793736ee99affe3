//! `render_weight_chart` end to end: weights written through the API, the
//! chart read back through the gateway, the PNG decoded and looked at.

use base64::Engine;
use serde_json::json;
use toolgate_core::ErrorCode;

use crate::common::Env;

#[tokio::test]
async fn the_weight_chart_is_a_real_png_of_the_recorded_days() {
    let env = Env::sqlite().await;
    let ctx = env.user("chart").await;
    for (day, kg) in [("01", 82.0), ("02", 81.6), ("04", 81.1), ("05", 80.9), ("07", 80.2)] {
        env.ok(
            &ctx,
            "update_body_data",
            json!({"op": "put_measurement", "date": format!("2026-03-{day}"), "weight_kg": kg}),
        )
        .await;
    }
    let envelope =
        env.call(&ctx, "render_weight_chart", json!({"from": "2026-03-01", "to": "2026-03-31"})).await;
    assert!(envelope.success, "{envelope:?}");
    let result = envelope.result.as_ref().unwrap();
    assert_eq!(result["points"], 5);
    assert_eq!(result["first_kg"], 82.0);
    assert_eq!(result["last_kg"], 80.2);
    assert_eq!(result["change_kg"], -1.8);
    assert_eq!(envelope.images.len(), 1);
    assert_eq!(envelope.images[0].mime_type, "image/png");

    let bytes = base64::engine::general_purpose::STANDARD.decode(&envelope.images[0].data).unwrap();
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut pixels).unwrap();
    assert_eq!((frame.width, frame.height), (640, 320));
    assert_eq!(frame.color_type, png::ColorType::Rgb);
    let rgb = &pixels[..frame.buffer_size()];
    let inked = rgb.chunks(3).filter(|p| p != &[255, 255, 255]).count();
    let blue = rgb.chunks(3).filter(|p| p[2] > 200 && p[0] < 80).count();
    assert!(inked > 2_000, "not blank: {inked} non-white pixels");
    assert!(blue > 500, "the weight line is drawn: {blue} blue pixels");

    // The line falls (the weight went down): its blue pixels on the left sit higher than on the right.
    let mean_row = |cols: std::ops::Range<usize>| {
        let rows: Vec<usize> = (0..320usize)
            .flat_map(|y| cols.clone().map(move |x| (x, y)))
            .filter(|&(x, y)| {
                let p = &rgb[(y * 640 + x) * 3..(y * 640 + x) * 3 + 3];
                p[2] > 200 && p[0] < 80
            })
            .map(|(_, y)| y)
            .collect();
        rows.iter().sum::<usize>() as f64 / rows.len().max(1) as f64
    };
    assert!(mean_row(16..80) < mean_row(560..624), "the line goes down from left to right");

    let empty =
        env.call(&ctx, "render_weight_chart", json!({"from": "2025-01-01", "to": "2025-01-31"})).await;
    assert_eq!(empty.code(), Some(ErrorCode::NotFound), "{empty:?}");
    assert!(empty.images.is_empty());
}

/// The tool is typed: its schema comes from its input type (dates with a
/// format and pattern, nothing else accepted), and a call that breaks it or
/// its rule is refused with every reason before the API is asked.
#[tokio::test]
async fn the_chart_range_is_checked_from_its_one_declaration() {
    let env = Env::sqlite().await;
    let ctx = env.user("chart-range").await;
    let spec = env.gateway.spec("render_weight_chart").expect("the chart tool is registered");
    let schema = &spec.input_schema;
    assert_eq!(schema["required"], json!(["from", "to"]), "{schema}");
    assert_eq!(schema["additionalProperties"], json!(false), "{schema}");
    for field in ["from", "to"] {
        assert_eq!(schema["properties"][field]["format"], "date", "{schema}");
        assert!(schema["properties"][field]["pattern"].is_string(), "{schema}");
    }

    let reversed =
        env.call(&ctx, "render_weight_chart", json!({"from": "2026-03-31", "to": "2026-03-01"})).await;
    assert_eq!(reversed.code(), Some(ErrorCode::InvalidParams), "{reversed:?}");
    let details = reversed.error.as_ref().unwrap().details.as_ref().unwrap().to_string();
    assert!(details.contains("/to") && details.contains("before"), "{details}");

    let not_a_date = env
        .call(&ctx, "render_weight_chart", json!({"from": "2026-02-30", "to": "2026-03-01", "x": 1}))
        .await;
    assert_eq!(not_a_date.code(), Some(ErrorCode::InvalidParams), "{not_a_date:?}");
    let details = not_a_date.error.as_ref().unwrap().details.as_ref().unwrap().to_string();
    assert!(details.contains("/from") && details.contains("x"), "{details}");
}
