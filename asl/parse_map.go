package asl

import (
	"slices"
	"strings"

	"github.com/stepd/stepd/value"
)

func (p *parser) mapState(st *State, o *value.Object, ptr string) {
	procKey := "ItemProcessor"
	pv, ok := o.Get("ItemProcessor")
	if !ok {
		pv, ok = o.Get("Iterator")
		procKey = "Iterator"
	}
	if o.Has("ItemProcessor") && o.Has("Iterator") {
		p.errorf(ptr, CodeSchema, "Only one of 'ItemProcessor' or 'Iterator' can be specified")
	}
	if !ok {
		p.errorf(ptr, CodeSchema, "These fields are required: [ItemProcessor]")
	} else if po, isObj := object(pv); !isObj {
		p.errorf(ptr+"/"+procKey, CodeSchema, "Expected value of type 'Object' but got '%s'", typeName(pv))
	} else {
		st.ProcessorMode = "INLINE"
		if cv, ok := po.Get("ProcessorConfig"); ok {
			if co, isObj := object(cv); isObj {
				if m := p.str(co, "Mode", ptr+"/"+procKey+"/ProcessorConfig"); m != "" {
					st.ProcessorMode = m
					if m != "INLINE" && m != "DISTRIBUTED" {
						p.errorf(ptr+"/"+procKey+"/ProcessorConfig/Mode", CodeSchema, "Instance value (\"%s\") not found in enum (possible values: [\"INLINE\",\"DISTRIBUTED\"])", m)
					}
				}
				st.ExecutionType = p.str(co, "ExecutionType", ptr+"/"+procKey+"/ProcessorConfig")
				if t := st.ExecutionType; t != "" && t != "STANDARD" && t != "EXPRESS" {
					p.errorf(ptr+"/"+procKey+"/ProcessorConfig/ExecutionType", CodeSchema, "Instance value (\"%s\") not found in enum (possible values: [\"STANDARD\",\"EXPRESS\"])", t)
				}
				for _, k := range co.Keys() {
					if k != "Mode" && k != "ExecutionType" {
						p.errorf(ptr+"/"+procKey+"/ProcessorConfig/"+escape(k), CodeSchema, "Field '%s' is not supported", k)
					}
				}
			} else {
				p.errorf(ptr+"/"+procKey+"/ProcessorConfig", CodeSchema, "Expected value of type 'Object' but got '%s'", typeName(cv))
			}
		}
		st.ItemProcessor = p.machine(po, ptr+"/"+procKey, scopeProcessor)
	}
	st.ItemsPath = p.path(o, "ItemsPath", ptr)
	st.Items = field(o, "Items")
	st.ItemSelector = field(o, "ItemSelector")
	st.MaxConcurrency = field(o, "MaxConcurrency")
	st.MaxConcurrencyPath = p.str(o, "MaxConcurrencyPath", ptr)
	st.ToleratedFailureCount = field(o, "ToleratedFailureCount")
	st.ToleratedFailurePercentage = field(o, "ToleratedFailurePercentage")
	st.ToleratedFailureCountPath = p.str(o, "ToleratedFailureCountPath", ptr)
	st.ToleratedFailurePercentagePath = p.str(o, "ToleratedFailurePercentagePath", ptr)
	st.ItemReader = field(o, "ItemReader")
	st.ItemBatcher = field(o, "ItemBatcher")
	st.ResultWriter = field(o, "ResultWriter")
	st.Label = p.str(o, "Label", ptr)
	if st.ItemBatcher.Set {
		st.Batcher = p.itemBatcher(st, ptr+"/ItemBatcher")
	}
	if st.ItemReader.Set {
		st.Reader = p.itemReader(st, ptr+"/ItemReader")
	}
	if st.ResultWriter.Set {
		st.Writer = p.resultWriter(st, ptr+"/ResultWriter")
	}
	if st.MaxConcurrency.Set && st.MaxConcurrencyPath != "" {
		p.errorf(ptr, CodeSchema, "Only one of 'MaxConcurrency' or 'MaxConcurrencyPath' can be specified")
	}
	if v, ok := st.MaxConcurrency.Value.(value.Number); ok {
		if i, exact := v.Int64(); !exact || i < 0 {
			p.errorf(ptr+"/MaxConcurrency", CodeSchema, "Expected a non-negative integer but got '%s'", string(v))
		}
	}
}

// itemBatcher parses a Map's ItemBatcher: an object of known members only,
// each limit a positive integer given once (literally, by path in
// JSONPath or by expression in JSONata), in a DISTRIBUTED Map.
func (p *parser) itemBatcher(st *State, ptr string) *ItemBatcher {
	o, ok := object(st.ItemBatcher.Value)
	if !ok {
		p.errorf(ptr, CodeSchema, "Expected value of type 'Object' but got '%s'", typeName(st.ItemBatcher.Value))
		return nil
	}
	if st.ProcessorMode != "DISTRIBUTED" {
		p.errorf(ptr, CodeSchema, "The field 'ItemBatcher' is only supported in a Map state whose ProcessorConfig Mode is DISTRIBUTED")
	}
	allowed := set("MaxItemsPerBatch", "MaxInputBytesPerBatch", "BatchInput", "MaxItemsPerBatchPath", "MaxInputBytesPerBatchPath")
	for _, k := range o.Keys() {
		if !allowed[k] {
			p.errorf(ptr+"/"+escape(k), CodeSchema, "Field '%s' is not supported", k)
		} else if st.QueryLanguage == JSONata && strings.HasSuffix(k, "Path") {
			p.errorf(ptr+"/"+k, CodeSchema, "The field '%s' is not supported in JSONata query language", k)
		}
	}
	b := &ItemBatcher{Pointer: ptr,
		MaxItemsPerBatch: field(o, "MaxItemsPerBatch"), MaxInputBytesPerBatch: field(o, "MaxInputBytesPerBatch"),
		MaxItemsPerBatchPath: p.str(o, "MaxItemsPerBatchPath", ptr), MaxInputBytesPerBatchPath: p.str(o, "MaxInputBytesPerBatchPath", ptr),
		BatchInput: field(o, "BatchInput")}
	for _, l := range []struct {
		name string
		f    Field
		path string
		max  int64
	}{
		{"MaxItemsPerBatch", b.MaxItemsPerBatch, b.MaxItemsPerBatchPath, 0},
		{"MaxInputBytesPerBatch", b.MaxInputBytesPerBatch, b.MaxInputBytesPerBatchPath, maxBatchBytes},
	} {
		if l.f.Set && l.path != "" {
			p.errorf(ptr, CodeSchema, "Only one of '%s' or '%sPath' can be specified", l.name, l.name)
		}
		if !l.f.Set {
			continue
		}
		switch v := l.f.Value.(type) {
		case value.Number:
			if i, exact := v.Int64(); !exact || i < 1 || l.max > 0 && i > l.max {
				if l.max > 0 {
					p.errorf(ptr+"/"+l.name, CodeSchema, "Expected an integer between 1 and %d but got '%s'", l.max, string(v))
				} else {
					p.errorf(ptr+"/"+l.name, CodeSchema, "Expected a positive integer but got '%s'", string(v))
				}
			}
		case string:
			if st.QueryLanguage != JSONata {
				p.errorf(ptr+"/"+l.name, CodeSchema, "Expected value of type 'Integer' but got 'String'")
			}
		default:
			p.errorf(ptr+"/"+l.name, CodeSchema, "Expected value of type 'Integer' but got '%s'", typeName(v))
		}
	}
	if !b.MaxItemsPerBatch.Set && !b.MaxInputBytesPerBatch.Set && b.MaxItemsPerBatchPath == "" && b.MaxInputBytesPerBatchPath == "" {
		p.errorf(ptr, CodeSchema, "These fields are required: [MaxItemsPerBatch | MaxItemsPerBatchPath | MaxInputBytesPerBatch | MaxInputBytesPerBatchPath]")
	}
	if b.BatchInput.Set && st.QueryLanguage != JSONata {
		p.objectField(b.BatchInput, ptr+"/BatchInput")
	}
	return b
}

// itemReader parses a Map's ItemReader: known members only, each named
// when it is not, with the ReaderConfig its Resource needs.
func (p *parser) itemReader(st *State, ptr string) *ItemReader {
	o, ok := object(st.ItemReader.Value)
	if !ok {
		p.errorf(ptr, CodeSchema, "Expected value of type 'Object' but got '%s'", typeName(st.ItemReader.Value))
		return nil
	}
	if st.ProcessorMode != "DISTRIBUTED" {
		p.errorf(ptr, CodeSchema, "The field 'ItemReader' is only supported in a Map state whose ProcessorConfig Mode is DISTRIBUTED")
	}
	params := "Parameters"
	if st.QueryLanguage == JSONata {
		params = "Arguments"
	}
	for _, k := range o.Keys() {
		switch k {
		case "Resource", "ReaderConfig", params:
		case "Parameters", "Arguments":
			p.errorf(ptr+"/"+k, CodeSchema, "The field '%s' is not supported in %s query language", k, map[bool]string{true: "JSONata", false: "JSONPath"}[st.QueryLanguage == JSONata])
		default:
			p.errorf(ptr+"/"+escape(k), CodeSchema, "Field '%s' is not supported", k)
		}
	}
	r := &ItemReader{Pointer: ptr, Resource: p.str(o, "Resource", ptr), Parameters: field(o, params)}
	if st.QueryLanguage != JSONata { // Arguments may be one expression
		p.objectField(r.Parameters, ptr+"/"+params)
	}
	switch r.Resource {
	case "arn:aws:states:::s3:getObject":
		r.Action = "getObject"
	case "arn:aws:states:::s3:listObjectsV2":
		r.Action = "listObjectsV2"
	case "":
		p.errorf(ptr, CodeSchema, "These fields are required: [Resource]")
	default:
		p.errorf(ptr+"/Resource", CodeSchema, "The ItemReader Resource '%s' is not supported: stepd reads items with arn:aws:states:::s3:getObject or arn:aws:states:::s3:listObjectsV2", r.Resource)
	}
	cv, hasConfig := o.Get("ReaderConfig")
	co, isObj := object(cv)
	if hasConfig && !isObj {
		p.errorf(ptr+"/ReaderConfig", CodeSchema, "Expected value of type 'Object' but got '%s'", typeName(cv))
	}
	if co == nil {
		co = value.NewObject(0)
	}
	cptr := ptr + "/ReaderConfig"
	for _, k := range co.Keys() {
		switch k {
		case "InputType", "ManifestType", "Transformation", "ItemsPointer", "CSVHeaderLocation", "CSVHeaders", "CSVDelimiter", "MaxItems", "MaxItemsPath":
		default:
			p.errorf(cptr+"/"+escape(k), CodeSchema, "Field '%s' is not supported", k)
		}
	}
	r.InputType = p.str(co, "InputType", cptr)
	r.ManifestType = p.str(co, "ManifestType", cptr)
	r.Transformation = p.str(co, "Transformation", cptr)
	r.ItemsPointer = p.str(co, "ItemsPointer", cptr)
	r.CSVHeaderLocation = p.str(co, "CSVHeaderLocation", cptr)
	r.CSVDelimiter = p.str(co, "CSVDelimiter", cptr)
	r.MaxItems = field(co, "MaxItems")
	r.MaxItemsPath = p.str(co, "MaxItemsPath", cptr)
	if hv, ok := co.Get("CSVHeaders"); ok {
		r.CSVHeaders = p.stringList(hv, cptr+"/CSVHeaders")
	}
	p.readerConfig(r, co, cptr)
	switch r.CSVHeaderLocation {
	case "", "FIRST_ROW":
		if len(r.CSVHeaders) > 0 {
			p.errorf(cptr+"/CSVHeaders", CodeSchema, "CSVHeaders can only be given with the CSVHeaderLocation GIVEN")
		}
	case "GIVEN":
		if len(r.CSVHeaders) == 0 {
			p.errorf(cptr, CodeSchema, "These fields are required: [CSVHeaders]")
		}
	default:
		p.errorf(cptr+"/CSVHeaderLocation", CodeSchema, "Instance value (\"%s\") not found in enum (possible values: [\"FIRST_ROW\",\"GIVEN\"])", r.CSVHeaderLocation)
	}
	switch r.CSVDelimiter {
	case "", "COMMA", "PIPE", "SEMICOLON", "SPACE", "TAB":
	default:
		p.errorf(cptr+"/CSVDelimiter", CodeSchema, "Instance value (\"%s\") not found in enum (possible values: [\"COMMA\",\"PIPE\",\"SEMICOLON\",\"SPACE\",\"TAB\"])", r.CSVDelimiter)
	}
	if r.MaxItems.Set && r.MaxItemsPath != "" {
		p.errorf(cptr, CodeSchema, "Only one of 'MaxItems' or 'MaxItemsPath' can be specified")
	}
	if st.QueryLanguage == JSONata && r.MaxItemsPath != "" {
		p.errorf(cptr+"/MaxItemsPath", CodeSchema, "The field 'MaxItemsPath' is not supported in JSONata query language")
	}
	switch v := r.MaxItems.Value.(type) {
	case nil:
	case value.Number:
		if i, exact := v.Int64(); !exact || i < 0 || i > 100000000 {
			p.errorf(cptr+"/MaxItems", CodeSchema, "Expected an integer between 0 and 100000000 but got '%s'", string(v))
		}
	case string:
		if st.QueryLanguage != JSONata {
			p.errorf(cptr+"/MaxItems", CodeSchema, "Expected value of type 'Integer' but got 'String'")
		}
	default:
		p.errorf(cptr+"/MaxItems", CodeSchema, "Expected value of type 'Integer' but got '%s'", typeName(v))
	}
	// ItemsPath (or Items) may stand beside an ItemReader, as AWS
	// accepts: the ItemReader reads the items.
	return r
}

// readerConfig checks what a ReaderConfig's members say together: the
// InputType the Resource reads, a manifest's or a listing's files, and the
// members that only one InputType takes.
func (p *parser) readerConfig(r *ItemReader, co *value.Object, cptr string) {
	enum := func(name, v string, values ...string) bool {
		if v == "" || slices.Contains(values, v) {
			return true
		}
		p.errorf(cptr+"/"+name, CodeSchema, "Instance value (\"%s\") not found in enum (possible values: [\"%s\"])", v, strings.Join(values, "\",\""))
		return false
	}
	if !enum("InputType", r.InputType, "CSV", "JSON", "JSONL", "PARQUET", "MANIFEST") ||
		!enum("ManifestType", r.ManifestType, "ATHENA_DATA", "S3_INVENTORY") ||
		!enum("Transformation", r.Transformation, "NONE", "LOAD_AND_FLATTEN") {
		return
	}
	switch r.Action {
	case "getObject":
		if r.InputType == "" {
			p.errorf(cptr, CodeSchema, "These fields are required: [InputType]")
		}
		if r.Transformation != "" {
			p.errorf(cptr+"/Transformation", CodeSchema, "The field 'Transformation' is only supported with the Resource arn:aws:states:::s3:listObjectsV2")
		}
	case "listObjectsV2":
		if r.ManifestType != "" {
			p.errorf(cptr+"/ManifestType", CodeSchema, "The field 'ManifestType' is only supported with the Resource arn:aws:states:::s3:getObject")
		}
		if r.Transformation == "LOAD_AND_FLATTEN" {
			if r.InputType == "" || r.InputType == "MANIFEST" {
				p.errorf(cptr+"/InputType", CodeSchema, "The Transformation LOAD_AND_FLATTEN needs the InputType of the listed objects: CSV, JSON, JSONL or PARQUET")
			}
		} else if r.InputType != "" {
			p.errorf(cptr+"/InputType", CodeSchema, "The InputType '%s' reads the listed objects only with the Transformation LOAD_AND_FLATTEN; without it the items are the objects listed by arn:aws:states:::s3:listObjectsV2", r.InputType)
		}
	}
	switch r.ManifestType {
	case "ATHENA_DATA":
		if r.InputType != "CSV" && r.InputType != "JSONL" && r.InputType != "PARQUET" {
			p.errorf(cptr+"/InputType", CodeSchema, "The ManifestType ATHENA_DATA reads data files of the InputType CSV, JSONL or PARQUET, not '%s'", r.InputType)
		}
	case "S3_INVENTORY":
		if r.InputType != "MANIFEST" && r.InputType != "CSV" {
			p.errorf(cptr+"/InputType", CodeSchema, "The ManifestType S3_INVENTORY reads an Amazon S3 Inventory of the InputType MANIFEST or CSV, not '%s'", r.InputType)
		}
	}
	if co.Has("ItemsPointer") {
		if r.InputType != "JSON" {
			p.errorf(cptr+"/ItemsPointer", CodeSchema, "The field 'ItemsPointer' is only supported with the InputType JSON")
		} else if r.ItemsPointer != "" && !strings.HasPrefix(r.ItemsPointer, "/") {
			p.errorf(cptr+"/ItemsPointer", CodeSchema, "The ItemsPointer '%s' is not a JSON Pointer: it must be empty or start with '/'", r.ItemsPointer)
		}
	}
	if r.InputType != "CSV" || r.ManifestType == "S3_INVENTORY" {
		for _, k := range []string{"CSVHeaderLocation", "CSVHeaders", "CSVDelimiter"} {
			if co.Has(k) {
				p.errorf(cptr+"/"+k, CodeSchema, "The field '%s' is only supported with the InputType CSV", k)
			}
		}
	}
}

// resultWriter parses a Map's ResultWriter: a Resource, s3:putObject,
// with its Parameters (Arguments), a WriterConfig, or both.
func (p *parser) resultWriter(st *State, ptr string) *ResultWriter {
	o, ok := object(st.ResultWriter.Value)
	if !ok {
		p.errorf(ptr, CodeSchema, "Expected value of type 'Object' but got '%s'", typeName(st.ResultWriter.Value))
		return nil
	}
	if st.ProcessorMode != "DISTRIBUTED" {
		p.errorf(ptr, CodeSchema, "The field 'ResultWriter' is only supported in a Map state whose ProcessorConfig Mode is DISTRIBUTED")
	}
	params := "Parameters"
	if st.QueryLanguage == JSONata {
		params = "Arguments"
	}
	for _, k := range o.Keys() {
		switch k {
		case "Resource", params, "WriterConfig":
		case "Parameters", "Arguments":
			p.errorf(ptr+"/"+k, CodeSchema, "The field '%s' is not supported in %s query language", k, map[bool]string{true: "JSONata", false: "JSONPath"}[st.QueryLanguage == JSONata])
		default:
			p.errorf(ptr+"/"+escape(k), CodeSchema, "Field '%s' is not supported", k)
		}
	}
	w := &ResultWriter{Pointer: ptr, Resource: p.str(o, "Resource", ptr), Parameters: field(o, params)}
	if st.QueryLanguage != JSONata {
		p.objectField(w.Parameters, ptr+"/"+params)
	}
	cv, hasConfig := o.Get("WriterConfig")
	if hasConfig {
		p.writerConfig(w, cv, ptr+"/WriterConfig")
	}
	switch w.Resource {
	case "arn:aws:states:::s3:putObject":
		if !w.Parameters.Set {
			p.errorf(ptr, CodeSchema, "These fields are required: [%s]", params)
		}
	case "":
		if !hasConfig {
			p.errorf(ptr, CodeSchema, "These fields are required: [Resource, %s] or [WriterConfig]", params)
		} else if w.Parameters.Set {
			p.errorf(ptr, CodeSchema, "These fields are required: [Resource]")
		}
	default:
		p.errorf(ptr+"/Resource", CodeSchema, "The ResultWriter Resource '%s' is not supported: results are written with arn:aws:states:::s3:putObject", w.Resource)
	}
	return w
}

// writerConfig parses a ResultWriter's WriterConfig: OutputType JSON or
// JSONL, Transformation NONE, COMPACT or FLATTEN.
func (p *parser) writerConfig(w *ResultWriter, cv any, cptr string) {
	co, ok := object(cv)
	if !ok {
		p.errorf(cptr, CodeSchema, "Expected value of type 'Object' but got '%s'", typeName(cv))
		return
	}
	for _, k := range co.Keys() {
		if k != "OutputType" && k != "Transformation" {
			p.errorf(cptr+"/"+escape(k), CodeSchema, "Field '%s' is not supported", k)
		}
	}
	w.OutputType = p.str(co, "OutputType", cptr)
	w.Transformation = p.str(co, "Transformation", cptr)
	if t := w.OutputType; t != "" && t != "JSON" && t != "JSONL" {
		p.errorf(cptr+"/OutputType", CodeSchema, "Instance value (\"%s\") not found in enum (possible values: [\"JSON\",\"JSONL\"])", t)
	}
	if t := w.Transformation; t != "" && t != "NONE" && t != "COMPACT" && t != "FLATTEN" {
		p.errorf(cptr+"/Transformation", CodeSchema, "Instance value (\"%s\") not found in enum (possible values: [\"NONE\",\"COMPACT\",\"FLATTEN\"])", t)
	}
}

// maxBatchBytes is the largest MaxInputBytesPerBatch AWS accepts: a
// batch is one child execution's input, at most 256 KiB.
const maxBatchBytes = 256 * 1024
