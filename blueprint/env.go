package blueprint

import (
	"fmt"
	"reflect"
	"time"
)

// Scope is the state an expression or template is evaluated against. The
// runtime fills it from the run's recorded events.
type Scope struct {
	Inputs map[string]any
	// Outputs holds each completed node's outputs by node id, including
	// its "outcome".
	Outputs map[string]map[string]any
	// Attempts counts how many times each node has run.
	Attempts map[string]int
	// Feedback is the feedback text handed to the node being entered.
	Feedback string
	// Outcome is the outcome of the node whose edges are being evaluated.
	Outcome string
	Run     RunInfo
}

// RunInfo describes the run as a whole, as run.* in expressions.
type RunInfo struct {
	Elapsed  time.Duration
	Tokens   int
	NodeRuns int
	// Cost is the USD the run's nodes have spent (run.cost).
	Cost float64
}

// envSchema is the typed expression environment of one blueprint, built as
// Go struct types so expr-lang's checker catches unknown names and fields.
type envSchema struct {
	typ     reflect.Type
	inputs  *structSchema
	outputs *structSchema
	perNode map[string]*structSchema
	attempt *structSchema
	zero    any
}

// structSchema maps expression names to fields of a generated struct type.
type structSchema struct {
	typ   reflect.Type
	index map[string]int
	kinds map[string]Kind
}

var anyType = reflect.TypeOf((*any)(nil)).Elem()

func kindType(k Kind) reflect.Type {
	switch k {
	case KindString:
		return reflect.TypeOf("")
	case KindInt:
		return reflect.TypeOf(0)
	case KindFloat:
		return reflect.TypeOf(0.0)
	case KindBool:
		return reflect.TypeOf(false)
	case KindDuration:
		return reflect.TypeOf(time.Duration(0))
	case KindStringList:
		return reflect.TypeOf([]string(nil))
	case KindStringMap:
		return reflect.TypeOf(map[string]string(nil))
	}
	return anyType
}

func newStruct(names []string, types []reflect.Type, kinds []Kind) *structSchema {
	s := &structSchema{index: map[string]int{}, kinds: map[string]Kind{}}
	fields := make([]reflect.StructField, len(names))
	for i, n := range names {
		fields[i] = reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: types[i], Tag: reflect.StructTag(fmt.Sprintf(`expr:"%s"`, n))}
		s.index[n] = i
		if kinds != nil {
			s.kinds[n] = kinds[i]
		}
	}
	s.typ = reflect.StructOf(fields)
	return s
}

var (
	runSchema = newStruct([]string{"elapsed", "tokens", "node_runs", "cost"},
		[]reflect.Type{kindType(KindDuration), kindType(KindInt), kindType(KindInt), kindType(KindFloat)}, []Kind{KindDuration, KindInt, KindInt, KindFloat})
	topNames = []string{"inputs", "outputs", "attempts", "feedback", "outcome", "run"}
)

// buildEnv creates the environment schema from inputs and node outputs.
func buildEnv(bp *Blueprint, types TypeSet) *envSchema {
	return buildEnvFor(bp, types, nil, nil)
}

// buildEnvFor builds the environment with only the named nodes under
// outputs and attempts (all nodes when only is nil). expr-lang's checker
// scans the environment's struct for every member access, so a blueprint
// of N nodes compiled against the full environment costs O(N) per
// expression; each expression gets the part it names instead. perNode
// schemas are shared when given.
func buildEnvFor(bp *Blueprint, types TypeSet, only map[string]bool, full *envSchema) *envSchema {
	env := &envSchema{perNode: map[string]*structSchema{}}
	if full != nil {
		env.inputs = full.inputs
	} else {
		var names []string
		var rtypes []reflect.Type
		var kinds []Kind
		for _, n := range bp.InputOrder {
			k := Kind(bp.Inputs[n].Type)
			names, rtypes, kinds = append(names, n), append(rtypes, kindType(k)), append(kinds, k)
		}
		env.inputs = newStruct(names, rtypes, kinds)
	}
	ids := bp.Order
	if only != nil {
		ids = sortedKeys(only)
	}
	var names []string
	var rtypes, counts []reflect.Type
	byType := map[string]*structSchema{}
	for _, id := range ids {
		ns := full.node(id)
		if ns == nil {
			// Nodes of one type share one schema.
			t := bp.Nodes[id].Type
			if ns = byType[t]; ns == nil {
				ns = nodeSchema(bp, types, id)
				byType[t] = ns
			}
		}
		env.perNode[id] = ns
		names, rtypes = append(names, id), append(rtypes, ns.typ)
		counts = append(counts, kindType(KindInt))
	}
	env.outputs = newStruct(names, rtypes, nil)
	env.attempt = newStruct(names, counts, nil)
	top := newStruct(topNames, []reflect.Type{env.inputs.typ, env.outputs.typ, env.attempt.typ,
		kindType(KindString), kindType(KindString), runSchema.typ}, nil)
	env.typ = top.typ
	env.zero = reflect.New(env.typ).Elem().Interface()
	return env
}

// node returns a node's output schema, or nil.
func (env *envSchema) node(id string) *structSchema {
	if env == nil {
		return nil
	}
	return env.perNode[id]
}

// nodeSchema builds the outputs.<id> struct: outcome plus declared outputs.
func nodeSchema(bp *Blueprint, types TypeSet, id string) *structSchema {
	nt, _ := lookupType(types, bp.Nodes[id].Type)
	onames, otypes, okinds := []string{"outcome"}, []reflect.Type{kindType(KindString)}, []Kind{KindString}
	for _, o := range sortedKeys(nt.Outputs) {
		if o == "outcome" {
			continue
		}
		onames, otypes, okinds = append(onames, o), append(otypes, kindType(nt.Outputs[o])), append(okinds, nt.Outputs[o])
	}
	return newStruct(onames, otypes, okinds)
}

// value builds the typed environment value for a scope.
func (env *envSchema) value(s *Scope) (any, error) {
	v := reflect.New(env.typ).Elem()
	if err := fill(v.Field(0), env.inputs, s.Inputs); err != nil {
		return nil, fmt.Errorf("inputs: %w", err)
	}
	outs := v.Field(1)
	for id, vals := range s.Outputs {
		ns, ok := env.perNode[id]
		if !ok {
			continue
		}
		if err := fill(outs.Field(env.outputs.index[id]), ns, vals); err != nil {
			return nil, fmt.Errorf("outputs.%s: %w", id, err)
		}
	}
	att := v.Field(2)
	for id, n := range s.Attempts {
		if i, ok := env.attempt.index[id]; ok {
			att.Field(i).SetInt(int64(n))
		}
	}
	v.Field(3).SetString(s.Feedback)
	v.Field(4).SetString(s.Outcome)
	run := v.Field(5)
	run.Field(0).SetInt(int64(s.Run.Elapsed))
	run.Field(1).SetInt(int64(s.Run.Tokens))
	run.Field(2).SetInt(int64(s.Run.NodeRuns))
	run.Field(3).SetFloat(s.Run.Cost)
	return v.Interface(), nil
}

// fill copies map values into a generated struct, converting where Go can.
func fill(dst reflect.Value, s *structSchema, vals map[string]any) error {
	for name, val := range vals {
		i, ok := s.index[name]
		if !ok || val == nil {
			continue
		}
		f := dst.Field(i)
		rv := reflect.ValueOf(val)
		switch {
		case rv.Type().AssignableTo(f.Type()):
			f.Set(rv)
		case f.Kind() == reflect.Slice && rv.Kind() == reflect.Slice:
			out := reflect.MakeSlice(f.Type(), rv.Len(), rv.Len())
			for j := 0; j < rv.Len(); j++ {
				item := reflect.ValueOf(rv.Index(j).Interface())
				if !item.IsValid() || !item.Type().ConvertibleTo(f.Type().Elem()) {
					return fmt.Errorf("%s[%d]: cannot use %v as %s", name, j, rv.Index(j).Interface(), f.Type().Elem())
				}
				out.Index(j).Set(item.Convert(f.Type().Elem()))
			}
			f.Set(out)
		case rv.Type().ConvertibleTo(f.Type()) && rv.Kind() != reflect.String && f.Kind() != reflect.String:
			f.Set(rv.Convert(f.Type()))
		default:
			return fmt.Errorf("%s: cannot use %T as %s", name, val, f.Type())
		}
	}
	return nil
}
