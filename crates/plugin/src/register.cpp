// The C++ half of pathprof's clang pass plugin: what LLVM's plugin interface
// can only be given in C++ (a pass class, a PassBuilder callback). The work is
// done in Rust (`pathprof_plugin_instrument`, src/lib.rs); this file only
// puts it at the start of clang's pipeline, after pathprof's early
// simplification, and turns its error into a clang error. With
// `--time-report` it also marks where the pipeline starts, where the early
// simplification ends and where optimisation ends.

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/OptimizationLevel.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/Error.h"

#include <string>

extern "C" {
// Instruments `module` (src/lib.rs); returns 1 when it changed it. On failure
// sets `*error` to a message for pathprof_plugin_free_error.
int pathprof_plugin_instrument(LLVMModuleRef module, char **error);
// Releases a message pathprof_plugin_instrument returned.
void pathprof_plugin_free_error(char *message);
// The early simplification pathprof runs before planning (src/lib.rs).
const char *pathprof_plugin_early_pipeline(void);
// Whether the phases are timed (`--time-report`, src/lib.rs).
int pathprof_plugin_time_report(void);
// A mark in the pipeline: 0 its start, 1 the early simplification's end, 2
// optimisation's end (src/lib.rs).
void pathprof_plugin_mark(int mark);
}

namespace {

struct InstrumentPass : llvm::PassInfoMixin<InstrumentPass> {
  llvm::PreservedAnalyses run(llvm::Module &module, llvm::ModuleAnalysisManager &) {
    char *error = nullptr;
    int changed = pathprof_plugin_instrument(llvm::wrap(&module), &error);
    if (error) {
      module.getContext().emitError(std::string("pathprof: ") + error);
      pathprof_plugin_free_error(error);
    }
    return changed ? llvm::PreservedAnalyses::none() : llvm::PreservedAnalyses::all();
  }

  // Runs at -O0 too (functions marked optnone are still counted).
  static bool isRequired() { return true; }
};

// Marks a point of the pipeline for the time report.
struct MarkPass : llvm::PassInfoMixin<MarkPass> {
  int mark;
  llvm::PreservedAnalyses run(llvm::Module &, llvm::ModuleAnalysisManager &) {
    pathprof_plugin_mark(mark);
    return llvm::PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};

}  // namespace

extern "C" void pathprof_plugin_register(llvm::PassBuilder *builder) {
  bool timed = pathprof_plugin_time_report() != 0;
  builder->registerPipelineStartEPCallback(
      [builder, timed](llvm::ModulePassManager &passes, llvm::OptimizationLevel level) {
        if (timed) {
          passes.addPass(MarkPass{{}, 0});
        }
        if (level != llvm::OptimizationLevel::O0) {
          if (llvm::Error e = builder->parsePassPipeline(passes, pathprof_plugin_early_pipeline())) {
            llvm::report_fatal_error(std::move(e));
          }
          if (timed) {
            passes.addPass(MarkPass{{}, 1});
          }
        }
        passes.addPass(InstrumentPass{});
      });
  if (timed) {
    builder->registerOptimizerLastEPCallback(
        [](llvm::ModulePassManager &passes, llvm::OptimizationLevel, llvm::ThinOrFullLTOPhase) {
          passes.addPass(MarkPass{{}, 2});
        });
  }
}
