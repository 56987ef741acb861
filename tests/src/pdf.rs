//! PDFs for the tests, written with lopdf.

use lopdf::{Document, Object, Stream, dictionary};

/// A one-page PDF (Helvetica as F1) whose page content stream is `content`,
/// raw PDF operators; optionally marked encrypted (a standard handler the
/// file's bytes do not follow: readers must refuse it).
pub fn one_page(content: &[u8], encrypted: bool) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
    });
    let resources_id = doc.add_object(dictionary! { "Font" => dictionary! { "F1" => font_id } });
    let content_id = doc.add_object(Stream::new(dictionary! {}, content.to_vec()));
    let page_id = doc.add_object(dictionary! {
        "Type" => "Page", "Parent" => pages_id, "Contents" => content_id,
    });
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => vec![page_id.into()], "Count" => 1,
            "Resources" => resources_id,
            "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        }),
    );
    let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog_id);
    if encrypted {
        let encrypt_id = doc.add_object(dictionary! {
            "Filter" => "Standard", "V" => 1, "R" => 2, "P" => -4,
            "O" => Object::string_literal(vec![1u8; 32]),
            "U" => Object::string_literal(vec![2u8; 32]),
        });
        doc.trailer.set("Encrypt", encrypt_id);
        doc.trailer.set(
            "ID",
            vec![
                Object::string_literal(vec![3u8; 16]),
                Object::string_literal(vec![3u8; 16]),
            ],
        );
    }
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    bytes
}
