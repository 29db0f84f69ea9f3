//! JSON Schema → GBNF: the grammar that makes llama.cpp's sampler emit only
//! answers of the schema. llama.cpp's own converter (`common`'s
//! `json_schema_to_grammar`, via llama-cpp-2) does the work, so the
//! grammar and the endpoint's JSON mode come from the same schema. It
//! honours `required`, `enum`, `maxItems`, `maxLength` and `pattern`, not
//! `minimum`/`maximum`: number ranges are checked after parsing.

use serde_json::Value;

use super::client::LlmError;

/// The GBNF grammar (start rule `root`) for `schema`.
pub fn schema_grammar(schema: &Value) -> Result<String, LlmError> {
    llama_cpp_2::json_schema_to_grammar(&schema.to_string())
        .map_err(|e| LlmError::Generation(format!("schema has no grammar: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_schema_becomes_a_grammar_with_its_bounds() {
        let grammar = schema_grammar(&json!({
            "type": "object",
            "properties": {
                "tags": {"type": "array", "items": {"type": "string", "maxLength": 8}, "maxItems": 3},
                "kind": {"enum": ["tool", "knowledge"]},
            },
            "required": ["tags", "kind"],
            "additionalProperties": false,
        }))
        .unwrap();
        assert!(grammar.contains("root ::="), "{grammar}");
        assert!(grammar.contains("\"\\\"tool\\\"\""), "{grammar}");
        assert!(grammar.contains("{0,8}"), "{grammar}");
    }
}
