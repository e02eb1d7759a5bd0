#include "CBenchSupport.h"

void cbench_touch(void *pointer) { (void)pointer; }
