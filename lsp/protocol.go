package lsp

import "encoding/json"

// The few LSP types the server reads and writes, with the protocol's
// member names (LSP 3.17).

// Position is a zero-based line and a character offset in UTF-16 code
// units (the protocol's default encoding).
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is a span of a document, end exclusive.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Location is a range in a document.
type Location struct {
	URI   string `json:"uri"`
	Range Range  `json:"range"`
}

// Diagnostic is a problem shown in the editor.
type Diagnostic struct {
	Range    Range  `json:"range"`
	Severity int    `json:"severity"`
	Code     string `json:"code,omitempty"`
	Source   string `json:"source"`
	Message  string `json:"message"`
}

// Diagnostic severities.
const (
	severityError   = 1
	severityWarning = 2
)

// TextEdit replaces a range with new text.
type TextEdit struct {
	Range   Range  `json:"range"`
	NewText string `json:"newText"`
}

// WorkspaceEdit is a set of edits by document.
type WorkspaceEdit struct {
	Changes map[string][]TextEdit `json:"changes"`
}

// MarkupContent is hover or documentation text.
type MarkupContent struct {
	Kind  string `json:"kind"` // markdown or plaintext
	Value string `json:"value"`
}

// Hover is the answer to textDocument/hover.
type Hover struct {
	Contents MarkupContent `json:"contents"`
	Range    *Range        `json:"range,omitempty"`
}

// CompletionItem is one proposal.
type CompletionItem struct {
	Label         string         `json:"label"`
	Kind          int            `json:"kind,omitempty"`
	Detail        string         `json:"detail,omitempty"`
	Documentation *MarkupContent `json:"documentation,omitempty"`
	TextEdit      *TextEdit      `json:"textEdit,omitempty"`
	FilterText    string         `json:"filterText,omitempty"`
	SortText      string         `json:"sortText,omitempty"`
}

// CompletionList is the answer to textDocument/completion.
type CompletionList struct {
	IsIncomplete bool             `json:"isIncomplete"`
	Items        []CompletionItem `json:"items"`
}

// Completion item kinds.
const (
	kindFunction  = 3
	kindVariable  = 6
	kindField     = 5
	kindValue     = 12
	kindReference = 18
	kindProperty  = 10
)

// DocumentSymbol is a symbol with its children.
type DocumentSymbol struct {
	Name           string           `json:"name"`
	Detail         string           `json:"detail,omitempty"`
	Kind           int              `json:"kind"`
	Range          Range            `json:"range"`
	SelectionRange Range            `json:"selectionRange"`
	Children       []DocumentSymbol `json:"children,omitempty"`
}

// Symbol kinds.
const (
	symbolModule   = 2
	symbolClass    = 5
	symbolMethod   = 6
	symbolFunction = 12
	symbolEvent    = 24
	symbolOperator = 25
	symbolObject   = 19
	symbolArray    = 18
)

// CodeAction is a fix offered for a range.
type CodeAction struct {
	Title       string         `json:"title"`
	Kind        string         `json:"kind"`
	Diagnostics []Diagnostic   `json:"diagnostics,omitempty"`
	IsPreferred bool           `json:"isPreferred,omitempty"`
	Edit        *WorkspaceEdit `json:"edit"`
}

// Request parameters.

type textDocumentIdentifier struct {
	URI string `json:"uri"`
}

type positionParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
	Position     Position               `json:"position"`
}

type didOpenParams struct {
	TextDocument struct {
		URI        string `json:"uri"`
		LanguageID string `json:"languageId"`
		Version    int    `json:"version"`
		Text       string `json:"text"`
	} `json:"textDocument"`
}

type didChangeParams struct {
	TextDocument struct {
		URI     string `json:"uri"`
		Version int    `json:"version"`
	} `json:"textDocument"`
	ContentChanges []struct {
		Range *Range `json:"range"`
		Text  string `json:"text"`
	} `json:"contentChanges"`
}

type referenceParams struct {
	positionParams
	Context struct {
		IncludeDeclaration bool `json:"includeDeclaration"`
	} `json:"context"`
}

type renameParams struct {
	positionParams
	NewName string `json:"newName"`
}

type codeActionParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
	Range        Range                  `json:"range"`
}

type initializeParams struct {
	RootURI               string          `json:"rootUri"`
	InitializationOptions json.RawMessage `json:"initializationOptions"`
}
