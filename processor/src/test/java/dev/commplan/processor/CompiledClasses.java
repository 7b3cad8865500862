package dev.commplan.processor;

import com.google.testing.compile.Compilation;
import java.io.IOException;
import java.io.InputStream;
import java.util.HashMap;
import java.util.Map;
import javax.tools.JavaFileObject;

/** Loads the classes of a compilation, delegating everything else to the test's class path. */
final class CompiledClasses extends ClassLoader {
  private final Map<String, JavaFileObject> classes = new HashMap<>();

  CompiledClasses(Compilation c, ClassLoader parent) {
    super(parent);
    for (JavaFileObject f : c.generatedFiles()) {
      if (f.getKind() == JavaFileObject.Kind.CLASS) {
        String path = f.toUri().getPath();
        String name = path.substring(path.indexOf("/CLASS_OUTPUT/") + "/CLASS_OUTPUT/".length())
            .replace(".class", "").replace('/', '.');
        classes.put(name, f);
      }
    }
  }

  @Override
  protected Class<?> findClass(String name) throws ClassNotFoundException {
    JavaFileObject f = classes.get(name);
    if (f == null) {
      throw new ClassNotFoundException(name);
    }
    try (InputStream in = f.openInputStream()) {
      byte[] bytes = in.readAllBytes();
      return defineClass(name, bytes, 0, bytes.length);
    } catch (IOException e) {
      throw new ClassNotFoundException(name, e);
    }
  }
}
