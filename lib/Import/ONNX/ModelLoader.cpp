// First import stage: reading and validating the ModelProto (in progress).
