package intrinsic

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/stepd/stepd/value"
)

// testResolver resolves simple paths for tests: "$" and "$$" roots followed
// by .name and [n] steps, and "$var" variables. It is no JSONPath
// implementation: anything else is an error.
type testResolver struct {
	input   any
	context any
	vars    map[string]any
	rand    Rand // nil: the fixed-seed source
}

func (r testResolver) Rand() Rand { return r.rand }

func (r testResolver) Resolve(path string) (any, error) {
	var root any
	var rest string
	switch {
	case strings.HasPrefix(path, "$$"):
		root, rest = r.context, path[2:]
	case strings.HasPrefix(path, "$.") || strings.HasPrefix(path, "$[") || path == "$":
		root, rest = r.input, path[1:]
	case strings.HasPrefix(path, "$"):
		name := path[1:]
		if i := strings.IndexAny(name, ".["); i >= 0 {
			name, rest = name[:i], name[i:]
		}
		v, ok := r.vars[name]
		if !ok {
			return nil, fmt.Errorf("variable $%s is not defined", name)
		}
		root = v
	default:
		return nil, fmt.Errorf("not a path: %q", path)
	}
	cur := root
	for rest != "" {
		switch {
		case rest[0] == '.':
			rest = rest[1:]
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			name := rest[:end]
			rest = rest[end:]
			o, ok := cur.(*value.Object)
			if !ok {
				return nil, fmt.Errorf("path %s: %s is not an object", path, value.String(cur))
			}
			v, ok := o.Get(name)
			if !ok {
				return nil, fmt.Errorf("path %s: no member %q", path, name)
			}
			cur = v
		case rest[0] == '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, fmt.Errorf("path %s: missing ]", path)
			}
			i, err := strconv.Atoi(rest[1:end])
			if err != nil {
				return nil, fmt.Errorf("path %s: bad index: %w", path, err)
			}
			rest = rest[end+1:]
			arr, ok := cur.([]any)
			if !ok || i < 0 || i >= len(arr) {
				return nil, fmt.Errorf("path %s: no item %d", path, i)
			}
			cur = arr[i]
		default:
			return nil, fmt.Errorf("path %s: unexpected %q", path, rest)
		}
	}
	return cur, nil
}
