/**
 * Backend-independent full-text search: tokenisation, the query sanitiser and
 * snippet building. Backends render a {@link ParsedQuery} in their own syntax.
 *
 * @module
 */

export {
  type AnalyzedText,
  type TextSpan,
  DEFAULT_INDEX_MAX_CHARS,
  analyzeText,
  cjkCharCount,
  cutUtf16,
  foldForMatch,
  tokenize,
  toIndexText,
  wordSpans,
} from "./search-text.js";
export {
  type HighlightTerms,
  type ParsedQuery,
  type QueryOperand,
  type QueryOperator,
  MAX_QUERY_OPERANDS,
  highlightTerms,
  parseSearchQuery,
} from "./search-query.js";
export { buildSnippet, contextText } from "./search-snippet.js";
