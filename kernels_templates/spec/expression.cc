#include "kernels_templates/spec/expression.h"

#include <muParser.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels_templates/spec/expression_functions.h"

namespace tunefleet::templates {

// A function of expressions: its name there, its name in
// expression_functions.h, and the implementation for its arity (one
// argument, two, or any number). Outside the anonymous namespace: Op,
// which ExpressionSet::Program holds, points at one.
struct ExpressionFunction {
  const char* name;
  const char* cxx;
  double (*f1)(double) = nullptr;
  double (*f2)(double, double) = nullptr;
  double (*fn)(const double*, int) = nullptr;
};

namespace {

using Multi = double (*)(const double*, int);
namespace fx = tunefleet_expr;

const ExpressionFunction kFunctions[] = {
    {"abs", "Abs", fx::Abs},
    {"ceil", "Ceil", fx::Ceil},
    {"floor", "Floor", fx::Floor},
    {"trunc", "Trunc", fx::Trunc},
    {"rint", "Rint", fx::Rint},
    {"sign", "Sign", fx::Sign},
    {"sqrt", "Sqrt", fx::Sqrt},
    {"exp", "Exp", fx::Exp},
    {"ln", "Ln", fx::Ln},
    {"log", "Ln", fx::Ln},
    {"log2", "Log2", fx::Log2},
    {"log10", "Log10", fx::Log10},
    {"sin", "Sin", fx::Sin},
    {"cos", "Cos", fx::Cos},
    {"tan", "Tan", fx::Tan},
    {"asin", "Asin", fx::Asin},
    {"acos", "Acos", fx::Acos},
    {"atan", "Atan", fx::Atan},
    {"sinh", "Sinh", fx::Sinh},
    {"cosh", "Cosh", fx::Cosh},
    {"tanh", "Tanh", fx::Tanh},
    {"asinh", "Asinh", fx::Asinh},
    {"acosh", "Acosh", fx::Acosh},
    {"atanh", "Atanh", fx::Atanh},
    {"atan2", "Atan2", nullptr, fx::Atan2},
    {"min", "Min", nullptr, nullptr, static_cast<Multi>(fx::Min)},
    {"max", "Max", nullptr, nullptr, static_cast<Multi>(fx::Max)},
    {"sum", "Sum", nullptr, nullptr, static_cast<Multi>(fx::Sum)},
    {"avg", "Avg", nullptr, nullptr, static_cast<Multi>(fx::Avg)},
};
// Operators muParser compiles to function calls.
const ExpressionFunction kModulo = {"%", "Mod", nullptr, fx::Mod};
const ExpressionFunction kMinus = {"-", "Neg", fx::Neg};
const ExpressionFunction kPlus = {"+", "Plus", fx::Plus};

// The entry whose implementation `raw` is, or null.
const ExpressionFunction* FindFunction(mu::erased_fun_type raw) {
  auto same = [raw](const ExpressionFunction& f) {
    return raw == reinterpret_cast<mu::erased_fun_type>(f.f1) ||
           raw == reinterpret_cast<mu::erased_fun_type>(f.f2) ||
           raw == reinterpret_cast<mu::erased_fun_type>(f.fn);
  };
  for (const ExpressionFunction* f : {&kModulo, &kMinus, &kPlus}) {
    if (same(*f)) return f;
  }
  for (const ExpressionFunction& f : kFunctions) {
    if (same(f)) return &f;
  }
  return nullptr;
}

// A double as a C++ literal of type double.
std::string CxxLiteral(double v) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "(-INFINITY)";
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return v < 0 ? absl::StrCat("(", s, ")") : s;
}

}  // namespace

// One instruction of a compiled expression.
struct Op {
  enum Code : uint8_t {
    kVar,    // push slots[arg]
    kConst,  // push value
    kLe,
    kGe,
    kNe,
    kEq,
    kLt,
    kGt,
    kAdd,
    kSub,
    kMul,
    kDiv,
    kPow,
    kAnd,
    kOr,
    kIf,     // pop; when 0, skip `arg` instructions
    kElse,   // skip `arg` instructions
    kEndIf,  // no-op
    kCall1,  // call fn->f1
    kCall2,  // call fn->f2
    kCallN,  // call fn->fn with `arg` arguments
  };
  // Where a binary operator's right operand is: popped from the stack, or
  // (fused with the instruction that pushed it) slots[arg] or `value`.
  enum Operand : uint8_t { kOnStack, kInSlot, kConstant };

  Code code = kConst;
  Operand rhs = kOnStack;
  int arg = 0;
  union {
    double value = 0;              // kConst, or a kConstant operand
    const ExpressionFunction* fn;  // kCall1, kCall2, kCallN
  };

  bool binary() const { return code >= kLe && code <= kOr; }
};

namespace {

// Fuses each push of a variable or constant into the binary operator that
// pops it at once (one instruction instead of two), and fixes the jumps.
std::vector<Op> Fuse(const std::vector<Op>& ops) {
  std::vector<Op> out;
  std::vector<int> at(ops.size() + 1);
  for (size_t i = 0; i < ops.size(); ++i) {
    at[i] = static_cast<int>(out.size());
    const bool push = ops[i].code == Op::kVar || ops[i].code == Op::kConst;
    if (push && i + 1 < ops.size() && ops[i + 1].binary()) {
      Op fused = ops[i + 1];
      fused.rhs = ops[i].code == Op::kVar ? Op::kInSlot : Op::kConstant;
      fused.arg = ops[i].arg;
      fused.value = ops[i].value;
      at[++i] = static_cast<int>(out.size());
      out.push_back(fused);
      continue;
    }
    out.push_back(ops[i]);
  }
  at[ops.size()] = static_cast<int>(out.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].code == Op::kIf || ops[i].code == Op::kElse) {
      out[at[i]].arg = at[i + ops[i].arg] - at[i];
    }
  }
  return out;
}

}  // namespace

struct ExpressionSet::Program {
  std::string text;
  std::string what;
  std::vector<Op> ops;
  std::vector<int> reads;
};

class ExpressionSet::Compiler {
 public:
  explicit Compiler(size_t variables) : storage_(variables, 0.0) {}

  // Defines the functions, operators and variables; muParser throws.
  void Define(const std::vector<std::string>& variables) {
    parser_.EnableOptimizer(false);  // keeps one token per source operation
    parser_.ClearFun();
    parser_.ClearInfixOprt();
    for (const ExpressionFunction& f : kFunctions) {
      if (f.f1 != nullptr) parser_.DefineFun(f.name, f.f1);
      if (f.f2 != nullptr) parser_.DefineFun(f.name, f.f2);
      if (f.fn != nullptr) parser_.DefineFun(f.name, f.fn);
    }
    parser_.DefineOprt("%", kModulo.f2, mu::prMUL_DIV, mu::oaLEFT, true);
    parser_.DefineInfixOprt("-", kMinus.f1);
    parser_.DefineInfixOprt("+", kPlus.f1);
    for (size_t i = 0; i < variables.size(); ++i) {
      parser_.DefineVar(variables[i], &storage_[i]);
    }
  }

  // Parses `text` into the ops of `program`; muParser throws.
  absl::Status Compile(const std::string& text, Program& program) {
    parser_.SetExpr(text);
    parser_.Eval();  // parses, and reports unknown names
    if (parser_.GetNumResults() != 1) {
      return Error(program, "gives several values; give one");
    }
    const mu::ParserByteCode& code = parser_.GetByteCode();
    if (code.GetMaxStackSize() >
        static_cast<size_t>(ExpressionSet::kMaxExpressionStack)) {
      return Error(program,
                   absl::StrCat("nests deeper than ",
                                ExpressionSet::kMaxExpressionStack, " levels"));
    }
    const mu::SToken* tokens = code.GetBase();
    for (size_t i = 0; i < code.GetSize() && tokens[i].Cmd != mu::cmEND; ++i) {
      absl::StatusOr<Op> op = Translate(tokens[i], program);
      if (!op.ok()) return op.status();
      program.ops.push_back(*op);
    }
    program.ops = Fuse(program.ops);
    std::sort(program.reads.begin(), program.reads.end());
    program.reads.erase(std::unique(program.reads.begin(), program.reads.end()),
                        program.reads.end());
    return absl::OkStatus();
  }

 private:
  static absl::Status Error(const Program& p, absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat(p.what, ": expression '", p.text, "' ", why));
  }

  absl::StatusOr<Op> Translate(const mu::SToken& t, Program& program) {
    Op op;
    switch (t.Cmd) {
      case mu::cmVAR:
        op.code = Op::kVar;
        op.arg = static_cast<int>(t.Val.ptr - storage_.data());
        program.reads.push_back(op.arg);
        return op;
      case mu::cmVAL:
        op.value = t.Val.data2;
        return op;
      case mu::cmIF:
      case mu::cmELSE:
        op.code = t.Cmd == mu::cmIF ? Op::kIf : Op::kElse;
        op.arg = t.Oprt.offset;
        return op;
      case mu::cmFUNC:
        op.arg = std::abs(t.Fun.argc);
        op.fn = t.Fun.cb._pUserData == nullptr ? FindFunction(t.Fun.cb._pRawFun)
                                               : nullptr;
        if (op.fn == nullptr) break;
        op.code = op.fn->fn ? Op::kCallN : op.fn->f2 ? Op::kCall2 : Op::kCall1;
        return op;
      default:
        return TranslateOperator(t.Cmd, program);
    }
    return Error(program, "uses an unsupported function");
  }

  static absl::StatusOr<Op> TranslateOperator(mu::ECmdCode cmd,
                                              const Program& program) {
    static constexpr std::pair<mu::ECmdCode, Op::Code> kOperators[] = {
        {mu::cmLE, Op::kLe},   {mu::cmGE, Op::kGe},      {mu::cmNEQ, Op::kNe},
        {mu::cmEQ, Op::kEq},   {mu::cmLT, Op::kLt},      {mu::cmGT, Op::kGt},
        {mu::cmADD, Op::kAdd}, {mu::cmSUB, Op::kSub},    {mu::cmMUL, Op::kMul},
        {mu::cmDIV, Op::kDiv}, {mu::cmPOW, Op::kPow},    {mu::cmLAND, Op::kAnd},
        {mu::cmLOR, Op::kOr},  {mu::cmENDIF, Op::kEndIf}};
    for (const auto& [from, to] : kOperators) {
      if (cmd == from) {
        Op op;
        op.code = to;
        return op;
      }
    }
    if (cmd == mu::cmASSIGN) return Error(program, "assigns; it may not");
    return Error(program, "uses an unsupported operation");
  }

  mu::Parser parser_;
  std::vector<double> storage_;  // where variables live while compiling
};

ExpressionSet::ExpressionSet(base::PassKey<ExpressionSet>) {}
ExpressionSet::~ExpressionSet() = default;

absl::StatusOr<std::unique_ptr<ExpressionSet>> ExpressionSet::Create(
    std::vector<std::string> variables) {
  auto set = std::make_unique<ExpressionSet>(base::PassKey<ExpressionSet>());
  set->compiler_ = std::make_unique<Compiler>(variables.size());
  // muParser reports errors by throwing; they stop here.
  try {
    set->compiler_->Define(variables);
  } catch (const mu::Parser::exception_type& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        "variables ", absl::StrJoin(variables, ","), ": ", e.GetMsg()));
  }
  set->variables_ = std::move(variables);
  return set;
}

absl::StatusOr<int> ExpressionSet::Add(const std::string& expression,
                                       const std::string& what) {
  if (expression.size() > kMaxExpressionLength) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": expression of ", expression.size(),
                     " characters; at most ", kMaxExpressionLength));
  }
  Program program;
  program.text = expression;
  program.what = what;
  // muParser reports errors by throwing; they stop here.
  try {
    if (absl::Status s = compiler_->Compile(expression, program); !s.ok()) {
      return s;
    }
  } catch (const mu::Parser::exception_type& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": expression '", expression, "': ", e.GetMsg()));
  }
  programs_.push_back(std::move(program));
  return size() - 1;
}

namespace {

// A binary operator's right operand (popped when on the stack).
inline double Rhs(const Op& op, const double* stack, int& top,
                  const double* slots) {
  switch (op.rhs) {
    case Op::kOnStack:
      return stack[top--];
    case Op::kInSlot:
      return slots[op.arg];
    case Op::kConstant:
      break;
  }
  return op.value;
}

// A binary operator applied, as muParser does.
inline double Apply(Op::Code code, double a, double b) {
  switch (code) {
    case Op::kLe:
      return a <= b;
    case Op::kGe:
      return a >= b;
    case Op::kNe:
      return a != b;
    case Op::kEq:
      return a == b;
    case Op::kLt:
      return a < b;
    case Op::kGt:
      return a > b;
    case Op::kAdd:
      return a + b;
    case Op::kSub:
      return a - b;
    case Op::kMul:
      return a * b;
    case Op::kDiv:
      return a / b;
    case Op::kPow:
      return tunefleet_expr::Pow(a, b);
    case Op::kAnd:
      return a && b;
    case Op::kOr:
      return a || b;
    default:
      return 0;  // not a binary operator
  }
}

}  // namespace

double ExpressionSet::Evaluate(int handle, const double* slots) const {
  const std::vector<Op>& ops = programs_[handle].ops;
  double stack[kMaxExpressionStack + 1];
  int top = -1;
  const Op* const end = ops.data() + ops.size();
  for (const Op* p = ops.data(); p < end; ++p) {
    const Op& op = *p;
    switch (op.code) {
      case Op::kVar:
        stack[++top] = slots[op.arg];
        break;
      case Op::kConst:
        stack[++top] = op.value;
        break;
      case Op::kIf:
        if (stack[top--] == 0) p += op.arg;
        break;
      case Op::kElse:
        p += op.arg;
        break;
      case Op::kEndIf:
        break;
      case Op::kCall1:
        stack[top] = op.fn->f1(stack[top]);
        break;
      case Op::kCall2:
        --top;
        stack[top] = op.fn->f2(stack[top], stack[top + 1]);
        break;
      case Op::kCallN:
        top -= op.arg - 1;
        stack[top] = op.fn->fn(&stack[top], op.arg);
        break;
      default: {
        const double b = Rhs(op, stack, top, slots);
        stack[top] = Apply(op.code, stack[top], b);
      }
    }
  }
  return stack[0];
}

absl::StatusOr<double> ExpressionSet::EvaluateFinite(
    int handle, const double* slots) const {
  const double v = Evaluate(handle, slots);
  if (std::isfinite(v)) return v;
  const Program& p = programs_[handle];
  return absl::InvalidArgumentError(absl::StrCat(
      p.what, ": expression '", p.text, "' is not finite (", v, ")"));
}

int ExpressionSet::size() const { return static_cast<int>(programs_.size()); }

const std::vector<int>& ExpressionSet::Reads(int handle) const {
  return programs_[handle].reads;
}

const std::string& ExpressionSet::Text(int handle) const {
  return programs_[handle].text;
}

const std::string& ExpressionSet::What(int handle) const {
  return programs_[handle].what;
}

std::string ExpressionSet::ToCxx(
    int handle, absl::FunctionRef<std::string(int)> variable) const {
  static const char* const kInfix[] = {"<=", ">=", "!=", "==", "<",
                                       ">",  "+",  "-",  "*",  "/"};
  std::vector<std::string> stack;
  auto pop = [&stack] {
    std::string s = std::move(stack.back());
    stack.pop_back();
    return s;
  };
  for (const Op& op : programs_[handle].ops) {
    switch (op.code) {
      case Op::kVar:
        stack.push_back(variable(op.arg));
        break;
      case Op::kConst:
        stack.push_back(CxxLiteral(op.value));
        break;
      case Op::kIf:
      case Op::kElse:
        break;  // the branches stay on the stack until kEndIf
      case Op::kEndIf: {
        const std::string no = pop(), yes = pop(), cond = pop();
        stack.push_back(
            absl::StrCat("(", cond, " != 0 ? ", yes, " : ", no, ")"));
        break;
      }
      case Op::kCall1:
      case Op::kCall2:
      case Op::kCallN: {
        std::vector<std::string> args(stack.end() - op.arg, stack.end());
        stack.resize(stack.size() - op.arg);
        const std::string joined = absl::StrJoin(args, ", ");
        stack.push_back(absl::StrCat("tunefleet_expr::", op.fn->cxx,
                                     op.fn->fn ? "({" : "(", joined,
                                     op.fn->fn ? "})" : ")"));
        break;
      }
      default: {
        const std::string b = op.rhs == Op::kInSlot     ? variable(op.arg)
                              : op.rhs == Op::kConstant ? CxxLiteral(op.value)
                                                        : pop();
        const std::string a = pop();
        if (op.code == Op::kPow) {
          stack.push_back(
              absl::StrCat("tunefleet_expr::Pow(", a, ", ", b, ")"));
        } else if (op.code == Op::kAnd || op.code == Op::kOr) {
          stack.push_back(absl::StrCat("(", a, " != 0 ",
                                       op.code == Op::kAnd ? "&&" : "||", " ",
                                       b, " != 0 ? 1.0 : 0.0)"));
        } else if (op.code <= Op::kGt) {
          stack.push_back(absl::StrCat("(", a, " ", kInfix[op.code - Op::kLe],
                                       " ", b, " ? 1.0 : 0.0)"));
        } else {
          stack.push_back(absl::StrCat("(", a, " ", kInfix[op.code - Op::kLe],
                                       " ", b, ")"));
        }
      }
    }
  }
  return stack.empty() ? "0.0" : stack.back();
}

}  // namespace tunefleet::templates
