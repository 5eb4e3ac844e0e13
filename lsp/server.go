// Package lsp is stepd's Language Server Protocol server (stepd lsp): it
// speaks JSON-RPC 2.0 over a stream (stdio) and gives an editor, for
// Amazon States Language definitions (JSON or YAML) and the state
// machines inside SAM and CloudFormation templates, the diagnostics of
// stepd validate placed in the text, completion, hover, navigation
// between states and their references, rename, document symbols and the
// validator's did-you-mean fixes.
//
// It reads documents through definition, template and validate (the
// very checks of stepd validate) and places their JSON-pointer
// diagnostics with its own lenient outline of the text (JSON) or the
// YAML library's positions (internal/yamlvalue.Outline). The framing
// (Content-Length headers) and the few protocol types it needs are
// written here, see docs/editors.md.
//
// It must not import the layers above the definitions' (interp, the
// engine and the backends, the server, service, api …, conformance,
// bench, cmd/stepd): it checks text, it runs nothing.
package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/definition"
	"github.com/stepd/stepd/validate"
	"github.com/stepd/stepd/value"
)

// Options configure a server; initializationOptions may add to them.
type Options struct {
	// Substitutions are DefinitionSubstitutions applied to every
	// definition (as --definition-substitutions), and shown on hover.
	Substitutions definition.Substitutions
	// Parameters are a template's parameters (as --parameter).
	Parameters map[string]string
	// Type is the workflow type of definition files (STANDARD default).
	Type            string
	Region, Account string
}

// config is what the server checks documents with.
type config struct {
	subs            definition.Substitutions
	params          map[string]string
	typ             string
	region, account string
}

// Server is one connection's server.
type Server struct {
	cfg         config
	out         *writer
	docs        map[string]*document
	initialized bool
	shutdown    bool
}

// NewServer returns a server with the given options.
func NewServer(o Options) *Server {
	c := config{subs: definition.Substitutions{}, params: map[string]string{}, typ: o.Type, region: o.Region, account: o.Account}
	for k, v := range o.Substitutions {
		c.subs[k] = v
	}
	for k, v := range o.Parameters {
		c.params[k] = v
	}
	if c.typ == "" {
		c.typ = validate.Standard
	}
	if c.region == "" {
		c.region = arn.DefaultRegion
	}
	if c.account == "" {
		c.account = arn.DefaultAccount
	}
	return &Server{cfg: c, docs: map[string]*document{}}
}

// ErrExitWithoutShutdown is returned when the client sent exit before
// shutdown (the protocol's exit code 1).
var ErrExitWithoutShutdown = errors.New("lsp: exit before shutdown")

// Serve answers the messages read from r on w until the client sends
// exit, the input ends or ctx is done (a signal: the read that may be
// waiting then is left to end with the process). A malformed header
// ends it with an error; a body that is not JSON gets a parse error
// answer.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	s.out = &writer{w: w}
	type read struct {
		body []byte
		err  error
	}
	reads := make(chan read)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		br := bufio.NewReader(r)
		for {
			body, err := ReadMessage(br)
			select {
			case reads <- read{body, err}:
			case <-stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	for {
		var in read
		select {
		case <-ctx.Done():
			return ctx.Err()
		case in = <-reads:
		}
		if errors.Is(in.err, io.EOF) {
			return nil
		}
		if in.err != nil {
			return in.err
		}
		var m message
		if err := json.Unmarshal(in.body, &m); err != nil {
			s.reply(json.RawMessage("null"), nil, &rpcError{Code: codeParseError, Message: err.Error()})
			continue
		}
		if m.Method == "exit" {
			if !s.shutdown {
				return ErrExitWithoutShutdown
			}
			return nil
		}
		if m.Method == "" {
			continue // a response to nothing we asked
		}
		result, rerr := s.safely(m)
		if len(m.ID) == 0 {
			continue // a notification: no answer
		}
		s.reply(m.ID, result, rerr)
	}
}

// safely handles a message; a panic (a defect, which FuzzDocument hunts)
// answers the request with an internal error instead of ending the
// editor's session.
func (s *Server) safely(m message) (result any, rerr *rpcError) {
	defer func() {
		if p := recover(); p != nil {
			result, rerr = nil, &rpcError{Code: codeInternalError, Message: fmt.Sprintf("stepd lsp: internal error in %s: %v", m.Method, p)}
		}
	}()
	return s.handle(m)
}

func (s *Server) reply(id json.RawMessage, result any, e *rpcError) {
	if e != nil {
		_ = s.out.send(errResponse{JSONRPC: "2.0", ID: id, Error: e})
		return
	}
	_ = s.out.send(response{JSONRPC: "2.0", ID: id, Result: result})
}

func (s *Server) notify(method string, params any) {
	_ = s.out.send(notification{JSONRPC: "2.0", Method: method, Params: params})
}

func decode[T any](raw json.RawMessage) (T, *rpcError) {
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, &rpcError{Code: codeInvalidParams, Message: err.Error()}
	}
	return v, nil
}

func (s *Server) handle(m message) (any, *rpcError) {
	if !s.initialized && m.Method != "initialize" {
		if len(m.ID) == 0 {
			return nil, nil
		}
		return nil, &rpcError{Code: codeServerNotInitialized, Message: "the server is not initialized"}
	}
	if s.shutdown && len(m.ID) > 0 {
		return nil, &rpcError{Code: codeInvalidRequest, Message: "the server is shut down"}
	}
	switch m.Method {
	case "initialize":
		return s.initialize(m.Params)
	case "initialized", "$/setTrace", "$/cancelRequest", "workspace/didChangeConfiguration", "textDocument/didSave":
		return nil, nil
	case "shutdown":
		s.shutdown = true
		return nil, nil
	case "textDocument/didOpen":
		p, err := decode[didOpenParams](m.Params)
		if err != nil {
			return nil, err
		}
		d := &document{uri: p.TextDocument.URI, path: uriPath(p.TextDocument.URI), text: p.TextDocument.Text, version: p.TextDocument.Version}
		s.docs[d.uri] = d
		s.refresh(d)
		return nil, nil
	case "textDocument/didChange":
		p, err := decode[didChangeParams](m.Params)
		if err != nil {
			return nil, err
		}
		d := s.docs[p.TextDocument.URI]
		if d == nil {
			return nil, nil
		}
		for _, c := range p.ContentChanges {
			if c.Range == nil {
				d.text = c.Text
				continue
			}
			l := newLines(d.text)
			a, b := l.offset(c.Range.Start), l.offset(c.Range.End)
			d.text = d.text[:a] + c.Text + d.text[max(a, b):]
		}
		d.version = p.TextDocument.Version
		s.refresh(d)
		return nil, nil
	case "textDocument/didClose":
		p, err := decode[struct {
			TextDocument textDocumentIdentifier `json:"textDocument"`
		}](m.Params)
		if err != nil {
			return nil, err
		}
		delete(s.docs, p.TextDocument.URI)
		s.notify("textDocument/publishDiagnostics", map[string]any{"uri": p.TextDocument.URI, "diagnostics": []Diagnostic{}})
		return nil, nil
	case "textDocument/completion":
		return withDoc(s, m.Params, func(d *document, p positionParams) (any, *rpcError) { return s.completion(d, p.Position), nil })
	case "textDocument/hover":
		return withDoc(s, m.Params, func(d *document, p positionParams) (any, *rpcError) { return s.hover(d, p.Position), nil })
	case "textDocument/definition":
		return withDoc(s, m.Params, func(d *document, p positionParams) (any, *rpcError) { return d.definition(p.Position), nil })
	case "textDocument/references":
		p, err := decode[referenceParams](m.Params)
		if err != nil {
			return nil, err
		}
		d := s.docs[p.TextDocument.URI]
		if d == nil {
			return nil, unknownDoc(p.TextDocument.URI)
		}
		return d.references(p.Position, p.Context.IncludeDeclaration), nil
	case "textDocument/prepareRename":
		return withDoc(s, m.Params, func(d *document, p positionParams) (any, *rpcError) { return d.prepareRename(p.Position), nil })
	case "textDocument/rename":
		p, err := decode[renameParams](m.Params)
		if err != nil {
			return nil, err
		}
		d := s.docs[p.TextDocument.URI]
		if d == nil {
			return nil, unknownDoc(p.TextDocument.URI)
		}
		return d.rename(p.Position, p.NewName)
	case "textDocument/documentSymbol":
		p, err := decode[struct {
			TextDocument textDocumentIdentifier `json:"textDocument"`
		}](m.Params)
		if err != nil {
			return nil, err
		}
		d := s.docs[p.TextDocument.URI]
		if d == nil {
			return nil, unknownDoc(p.TextDocument.URI)
		}
		return d.symbols(), nil
	case "textDocument/codeAction":
		p, err := decode[codeActionParams](m.Params)
		if err != nil {
			return nil, err
		}
		d := s.docs[p.TextDocument.URI]
		if d == nil {
			return nil, unknownDoc(p.TextDocument.URI)
		}
		return d.codeActions(p.Range), nil
	}
	if strings.HasPrefix(m.Method, "$/") || len(m.ID) == 0 {
		return nil, nil
	}
	return nil, &rpcError{Code: codeMethodNotFound, Message: "method not supported: " + m.Method}
}

func unknownDoc(uri string) *rpcError {
	return &rpcError{Code: codeRequestFailed, Message: "document not open: " + uri}
}

func withDoc(s *Server, raw json.RawMessage, fn func(*document, positionParams) (any, *rpcError)) (any, *rpcError) {
	p, err := decode[positionParams](raw)
	if err != nil {
		return nil, err
	}
	d := s.docs[p.TextDocument.URI]
	if d == nil {
		return nil, unknownDoc(p.TextDocument.URI)
	}
	return fn(d, p)
}

// refresh analyzes a document and publishes its diagnostics.
func (s *Server) refresh(d *document) {
	s.analyze(d)
	diags := d.diags
	if diags == nil {
		diags = []Diagnostic{}
	}
	s.notify("textDocument/publishDiagnostics", map[string]any{"uri": d.uri, "version": d.version, "diagnostics": diags})
}

// initOptions are the initializationOptions the server reads.
type initOptions struct {
	DefinitionSubstitutions map[string]any    `json:"definitionSubstitutions"`
	Parameters              map[string]string `json:"parameters"`
	Type                    string            `json:"type"`
	Region                  string            `json:"region"`
	Account                 string            `json:"account"`
}

func (s *Server) initialize(raw json.RawMessage) (any, *rpcError) {
	p, rerr := decode[initializeParams](raw)
	if rerr != nil {
		return nil, rerr
	}
	if len(p.InitializationOptions) > 0 && string(p.InitializationOptions) != "null" {
		o, rerr := decode[initOptions](p.InitializationOptions)
		if rerr != nil {
			return nil, &rpcError{Code: codeInvalidParams, Message: "initializationOptions: " + rerr.Message}
		}
		for k, v := range o.DefinitionSubstitutions {
			var x any = v
			if f, ok := v.(float64); ok {
				x = value.Number(fmt.Sprint(f))
			}
			if err := s.cfg.subs.Set(k, x); err != nil {
				return nil, &rpcError{Code: codeInvalidParams, Message: "initializationOptions.definitionSubstitutions: " + err.Error()}
			}
		}
		for k, v := range o.Parameters {
			s.cfg.params[k] = v
		}
		switch o.Type {
		case "":
		case validate.Standard, validate.Express:
			s.cfg.typ = o.Type
		default:
			return nil, &rpcError{Code: codeInvalidParams, Message: fmt.Sprintf("initializationOptions.type %q: want STANDARD or EXPRESS", o.Type)}
		}
		if o.Region != "" {
			s.cfg.region = o.Region
		}
		if o.Account != "" {
			s.cfg.account = o.Account
		}
	}
	s.initialized = true
	return map[string]any{
		"capabilities": map[string]any{
			"textDocumentSync":       map[string]any{"openClose": true, "change": 2},
			"completionProvider":     map[string]any{"triggerCharacters": []string{"\"", "$", ".", ":", " "}},
			"hoverProvider":          true,
			"definitionProvider":     true,
			"referencesProvider":     true,
			"renameProvider":         map[string]any{"prepareProvider": true},
			"documentSymbolProvider": true,
			"codeActionProvider":     map[string]any{"codeActionKinds": []string{"quickfix"}},
		},
		"serverInfo": map[string]any{"name": "stepd"},
	}, nil
}

// uriPath returns the file path of a file: URI (the URI itself for
// others); only its extension is used, to tell YAML from JSON.
func uriPath(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return uri
	}
	return filepath.FromSlash(u.Path)
}
