package asl

import (
	"fmt"

	"github.com/stepd/stepd/value"
)

var retrierFields = set("ErrorEquals", "IntervalSeconds", "MaxAttempts", "BackoffRate", "MaxDelaySeconds", "JitterStrategy", "Comment")

func (p *parser) retriers(o *value.Object, ptr string) []*Retrier {
	v, ok := o.Get("Retry")
	if !ok {
		return nil
	}
	arr, isArr := v.([]any)
	if !isArr {
		p.errorf(ptr+"/Retry", CodeSchema, "Expected value of type 'Array' but got '%s'", typeName(v))
		return nil
	}
	var out []*Retrier
	for i, e := range arr {
		rptr := fmt.Sprintf("%s/Retry/%d", ptr, i)
		ro, isObj := object(e)
		if !isObj {
			p.errorf(rptr, CodeSchema, "Expected value of type 'Object' but got '%s'", typeName(e))
			continue
		}
		p.fields(ro, rptr, retrierFields, "ErrorEquals")
		r := &Retrier{IntervalSeconds: 1, MaxAttempts: 3, BackoffRate: 2, JitterStrategy: "NONE", Pointer: rptr}
		if ev, ok := ro.Get("ErrorEquals"); ok {
			r.ErrorEquals = p.stringList(ev, rptr+"/ErrorEquals")
		}
		if n, ok := p.integer(ro, "IntervalSeconds", rptr, 1); ok {
			r.IntervalSeconds = n
		}
		if n, ok := p.integer(ro, "MaxAttempts", rptr, 0); ok {
			r.MaxAttempts = n
		}
		if n, ok := p.integer(ro, "MaxDelaySeconds", rptr, 1); ok {
			r.MaxDelaySeconds, r.HasMaxDelay = n, true
		}
		if bv, ok := ro.Get("BackoffRate"); ok {
			n, isNum := bv.(value.Number)
			if !isNum || n.Float64() < 1 {
				p.errorf(rptr+"/BackoffRate", CodeSchema, "BackoffRate must be a number greater than or equal to 1.0")
			} else {
				r.BackoffRate = n.Float64()
			}
		}
		if js := p.str(ro, "JitterStrategy", rptr); js != "" {
			if js != "FULL" && js != "NONE" {
				p.errorf(rptr+"/JitterStrategy", CodeSchema, "Instance value (\"%s\") not found in enum (possible values: [\"FULL\",\"NONE\"])", js)
			}
			r.JitterStrategy = js
		}
		r.Comment = p.str(ro, "Comment", rptr)
		out = append(out, r)
	}
	return out
}

var catcherFields = set("ErrorEquals", "Next", "ResultPath", "Output", "Assign", "Comment")

func (p *parser) catchers(o *value.Object, ptr, ql string) []*Catcher {
	v, ok := o.Get("Catch")
	if !ok {
		return nil
	}
	arr, isArr := v.([]any)
	if !isArr {
		p.errorf(ptr+"/Catch", CodeSchema, "Expected value of type 'Array' but got '%s'", typeName(v))
		return nil
	}
	var out []*Catcher
	for i, e := range arr {
		cptr := fmt.Sprintf("%s/Catch/%d", ptr, i)
		co, isObj := object(e)
		if !isObj {
			p.errorf(cptr, CodeSchema, "Expected value of type 'Object' but got '%s'", typeName(e))
			continue
		}
		p.fields(co, cptr, catcherFields, "ErrorEquals", "Next")
		c := &Catcher{Pointer: cptr}
		if ev, ok := co.Get("ErrorEquals"); ok {
			c.ErrorEquals = p.stringList(ev, cptr+"/ErrorEquals")
		}
		c.Next, c.hasNext = p.target(co, "Next", cptr)
		c.ResultPath = p.path(co, "ResultPath", cptr)
		c.Output = field(co, "Output")
		c.Assign = field(co, "Assign")
		p.objectField(c.Assign, cptr+"/Assign")
		c.Comment = p.str(co, "Comment", cptr)
		out = append(out, c)
	}
	return out
}
