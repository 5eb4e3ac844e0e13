package yamlvalue

import (
	"bytes"
	"errors"
	"io"

	yaml "go.yaml.in/yaml/v3"
)

// Node is one value of a YAML document and where it stands, for editors:
// the 1-based line and column (in characters) of its key and of its value.
type Node struct {
	Kind      byte // 'o' mapping, 'a' sequence, 's' string, 'n' other scalar (or an alias)
	Key       string
	HasKey    bool
	KeyLine   int
	KeyColumn int
	Line      int
	Column    int
	Value     string // a scalar's value
	// Style is the scalar's quoting: '"', '\'', '|' or '>' for a block
	// scalar, 0 when plain.
	Style    byte
	Children []*Node
}

// Outline reads one YAML document's nodes with their places, without
// resolving tags or aliases. An empty document gives an empty mapping.
func Outline(data []byte) (*Node, error) {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return &Node{Kind: 'o', Line: 1, Column: 1}, nil
		}
		return nil, libError(data, err)
	}
	if len(doc.Content) != 1 {
		return &Node{Kind: 'o', Line: 1, Column: 1}, nil
	}
	return outline(doc.Content[0], 0), nil
}

func outline(n *yaml.Node, depth int) *Node {
	out := &Node{Line: n.Line, Column: n.Column, Kind: 'n'}
	if depth > maxDepth {
		return out
	}
	switch n.Kind {
	case yaml.ScalarNode:
		out.Value = n.Value
		if n.ShortTag() == "!!str" || local(n) {
			out.Kind = 's'
		}
		switch {
		case n.Style&yaml.DoubleQuotedStyle != 0:
			out.Style = '"'
		case n.Style&yaml.SingleQuotedStyle != 0:
			out.Style = '\''
		case n.Style&yaml.LiteralStyle != 0:
			out.Style = '|'
		case n.Style&yaml.FoldedStyle != 0:
			out.Style = '>'
		}
	case yaml.SequenceNode:
		out.Kind = 'a'
		for _, e := range n.Content {
			out.Children = append(out.Children, outline(e, depth+1))
		}
	case yaml.MappingNode:
		out.Kind = 'o'
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			c := outline(v, depth+1)
			c.Key, c.HasKey, c.KeyLine, c.KeyColumn = k.Value, true, k.Line, k.Column
			out.Children = append(out.Children, c)
		}
	}
	return out
}
