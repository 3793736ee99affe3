//! Unit tests of the handler: results as MCP content, clipped client text.

use serde_json::json;

use super::*;

#[test]
fn images_become_image_content_beside_the_envelope() {
    let server = McpServer::new(Gateway::builder().build().unwrap(), Exposure::Direct);
    let png = toolgate_core::Image::png(&[0x89, b'P', b'N', b'G']);
    let envelope =
        Envelope::ok(json!({"points": 3}), Vec::new(), toolgate_core::Metadata::now("render_chart", 1.0, 1))
            .with_images(vec![png.clone()]);
    let result = server.tool_result(envelope.clone());
    assert_eq!(result.content.len(), 2);
    let image = result.content[1].as_image().expect("the second block is an image");
    assert_eq!((image.mime_type.as_str(), image.data.as_str()), ("image/png", png.data.as_str()));
    let structured = result.structured_content.unwrap();
    assert_eq!(structured["result"]["points"], 3);
    assert!(structured.get("images").is_none(), "the bytes are not sent twice");
    assert_eq!(result.is_error, Some(false));
}

#[test]
fn clip_keeps_short_text_and_cuts_long_text() {
    assert_eq!(clip("catalog"), "catalog");
    let long = "x".repeat(500);
    assert_eq!(clip(&long).chars().count(), 101);
}
