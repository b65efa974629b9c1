package org.transferqueue.remote.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.transferqueue.remote.MessageType;
import org.transferqueue.remote.controller.ControllerProtocol.Op;

class ControllerProtocolTest {
  @Test
  void shouldNameEveryEntryAsItsConstantAndListEachOnceInTheTable() throws IllegalAccessException {
    List<Op<?, ?>> constants = new ArrayList<>();
    for (Field field : ControllerProtocol.class.getDeclaredFields()) {
      if (Modifier.isStatic(field.getModifiers()) && field.getType() == Op.class) {
        Op<?, ?> op = (Op<?, ?>) field.get(null);
        assertThat(op.name()).as("name of %s", field.getName()).isEqualTo(field.getName());
        constants.add(op);
      }
    }
    assertThat(ControllerProtocol.OPS).containsExactlyInAnyOrderElementsOf(constants);
    assertThat(ControllerProtocol.types().stream().map(MessageType::typeId))
        .doesNotHaveDuplicates()
        .allSatisfy(type -> assertThat(type).isBetween(100, 199));
  }
}
