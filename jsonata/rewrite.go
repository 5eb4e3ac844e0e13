package jsonata

import (
	"reflect"

	"github.com/recolabs/gnata"
)

// rewriteConcat turns every "a & b" of a compiled expression into a call
// of the adapter's concatenation, $&(a, b) (a name no expression can
// write), so that & serialises through the bounded encoder. gnata's syntax
// tree lives in an internal package; its node type is read by reflection
// from a sample compiled at start-up, and when its layout is not the one
// the adapter knows, expressions are left as they are (concatRewrite is
// nil). It reports whether it rewrote anything.
func rewriteConcat(e *gnata.Expression) bool {
	if concatRewrite == nil {
		return false
	}
	root := astOf(e)
	if !root.IsValid() || root.IsNil() {
		return false
	}
	w := rewriter{seen: make(map[uintptr]bool)}
	w.walk(root)
	return w.changed
}

// astShape is what the adapter knows of gnata's syntax tree, read from
// samples: the node type, and the fields of a binary and a call node.
type astShape struct {
	node                 reflect.Type // the node struct
	binary, fn, variable string       // the Type of a binary operator, a call, a variable
}

var concatRewrite = func() *astShape {
	defer func() { _ = recover() }() // a layout the adapter does not know
	bin, err := gnata.Compile("a & b")
	if err != nil {
		return nil
	}
	call, err := gnata.Compile("$f(a, b)")
	if err != nil {
		return nil
	}
	b, c := astOf(bin), astOf(call)
	if !b.IsValid() || !c.IsValid() || b.Type() != c.Type() || b.Kind() != reflect.Pointer {
		return nil
	}
	bn, cn := b.Elem(), c.Elem()
	str := func(v reflect.Value, name string) string {
		f := v.FieldByName(name)
		if f.Kind() != reflect.String {
			panic("no string field " + name)
		}
		return f.String()
	}
	node := func(v reflect.Value, name string) reflect.Value {
		f := v.FieldByName(name)
		if f.Type() != b.Type() || f.IsNil() {
			panic("no node field " + name)
		}
		return f.Elem()
	}
	s := &astShape{node: bn.Type(), binary: str(bn, "Type"), fn: str(cn, "Type")}
	if str(bn, "Value") != "&" || str(node(bn, "Left"), "Value") != "a" || str(node(bn, "Right"), "Value") != "b" {
		return nil
	}
	proc := node(cn, "Procedure")
	s.variable = str(proc, "Type")
	args := cn.FieldByName("Arguments")
	if str(proc, "Value") != "f" || args.Kind() != reflect.Slice || args.Type().Elem() != b.Type() || args.Len() != 2 ||
		str(args.Index(0).Elem(), "Value") != "a" || str(args.Index(1).Elem(), "Value") != "b" {
		return nil
	}
	return s
}()

// astOf returns an expression's syntax tree (a pointer to its root node),
// or the zero Value.
func astOf(e *gnata.Expression) reflect.Value {
	v := reflect.ValueOf(e).Elem()
	f := v.FieldByName("ast")
	if !f.IsValid() || f.Kind() != reflect.Pointer {
		return reflect.Value{}
	}
	// The field is unexported: reach it through its address.
	return reflect.NewAt(f.Type(), f.Addr().UnsafePointer()).Elem()
}

type rewriter struct {
	seen    map[uintptr]bool
	changed bool
}

// walk visits every node reachable from v (a node pointer, or a slice,
// array, struct or pointer that holds some) and rewrites & nodes.
func (w *rewriter) walk(v reflect.Value) {
	s := concatRewrite
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || w.seen[v.Pointer()] {
			return
		}
		w.seen[v.Pointer()] = true
		w.walk(v.Elem())
		if v.Type().Elem() == s.node {
			w.rewrite(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				w.walk(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			w.walk(v.Index(i))
		}
	}
}

// rewrite turns n, a node, into a call of $& when it is "a & b".
func (w *rewriter) rewrite(n reflect.Value) {
	s := concatRewrite
	if n.FieldByName("Type").String() != s.binary || n.FieldByName("Value").String() != "&" {
		return
	}
	left, right := n.FieldByName("Left"), n.FieldByName("Right")
	if left.IsNil() || right.IsNil() {
		return
	}
	pos := n.FieldByName("Pos")
	proc := reflect.New(s.node)
	proc.Elem().FieldByName("Type").SetString(s.variable)
	proc.Elem().FieldByName("Value").SetString(concatName)
	proc.Elem().FieldByName("Pos").Set(pos)
	call := reflect.New(s.node).Elem()
	call.FieldByName("Type").SetString(s.fn)
	call.FieldByName("Pos").Set(pos)
	call.FieldByName("Procedure").Set(proc)
	args := reflect.MakeSlice(call.FieldByName("Arguments").Type(), 2, 2)
	args.Index(0).Set(left)
	args.Index(1).Set(right)
	call.FieldByName("Arguments").Set(args)
	n.Set(call)
	w.changed = true
}
