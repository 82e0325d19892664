# The first import stage's sources (protobuf -> generic IR), listed once:
# the main build's TrainccONNXReader and the fuzz target (test/fuzz), which
# compiles them instrumented, both include this file.
set(TRAINCC_ONNX_READER_SOURCES
  ModelLoader.cpp
  ModelValidation.cpp
  OpsetAdapter.cpp
  ExportChecks.cpp
  GraphImporter.cpp
)
