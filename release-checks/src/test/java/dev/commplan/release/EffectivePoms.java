package dev.commplan.release;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.maven.model.Dependency;
import org.apache.maven.model.Model;
import org.apache.maven.model.Parent;
import org.apache.maven.model.Repository;
import org.apache.maven.model.building.DefaultModelBuilderFactory;
import org.apache.maven.model.building.DefaultModelBuildingRequest;
import org.apache.maven.model.building.FileModelSource;
import org.apache.maven.model.building.ModelBuilder;
import org.apache.maven.model.building.ModelBuildingException;
import org.apache.maven.model.building.ModelBuildingRequest;
import org.apache.maven.model.building.ModelSource;
import org.apache.maven.model.resolution.ModelResolver;
import org.apache.maven.model.resolution.UnresolvableModelException;

/**
 * The effective POMs of the checkout (the root and each module it lists), built by Maven's own model
 * builder as {@code mvn help:effective-pom} shows them: the parent's inheritance (with the checkout's
 * parent, through relativePath), interpolation, imported BOMs (from the local repository), plugin
 * management. Offline: nothing is downloaded.
 */
final class EffectivePoms {
  private EffectivePoms() {}

  /** Module folder ({@code ""} for the root) → its effective model; {@code profiles} active as with -P. */
  static Map<String, Model> of(Path root, Path localRepository, List<String> profiles) throws ModelBuildingException {
    Map<String, Model> models = new LinkedHashMap<>();
    Model rootModel = build(root.resolve("pom.xml"), localRepository, profiles);
    models.put("", rootModel);
    for (String module : rootModel.getModules()) {
      models.put(module, build(root.resolve(module).resolve("pom.xml"), localRepository, profiles));
    }
    return models;
  }

  private static Model build(Path pom, Path localRepository, List<String> profiles) throws ModelBuildingException {
    ModelBuilder builder = new DefaultModelBuilderFactory().newInstance();
    DefaultModelBuildingRequest request = new DefaultModelBuildingRequest();
    request.setPomFile(pom.toFile());
    request.setValidationLevel(ModelBuildingRequest.VALIDATION_LEVEL_MAVEN_3_0);
    // Lifecycle bindings need Maven's core; plugin management is injected either way.
    request.setProcessPlugins(false);
    request.setTwoPhaseBuilding(false);
    request.setActiveProfileIds(profiles);
    Properties system = new Properties();
    system.putAll(System.getProperties());
    request.setSystemProperties(system);
    request.setModelResolver(new LocalRepositoryResolver(localRepository));
    return builder.build(request).getEffectiveModel();
  }

  /**
   * POMs that the checkout does not hold (imported BOMs) come from the local repository. ({@code
   * ModelResolver}'s methods return the deprecated {@code ModelSource}; a {@code FileModelSource} is also
   * its replacement, {@code ModelSource2}.)
   */
  @SuppressWarnings("deprecation")
  private record LocalRepositoryResolver(Path repository) implements ModelResolver {
    @Override
    public ModelSource resolveModel(String groupId, String artifactId, String version) throws UnresolvableModelException {
      Path pom = repository.resolve(groupId.replace('.', File.separatorChar)).resolve(artifactId).resolve(version)
          .resolve(artifactId + "-" + version + ".pom");
      if (!Files.isRegularFile(pom)) {
        throw new UnresolvableModelException("not in the local repository " + repository + " (build once online): " + pom,
            groupId, artifactId, version);
      }
      return new FileModelSource(pom.toFile());
    }

    @Override
    public ModelSource resolveModel(Parent parent) throws UnresolvableModelException {
      return resolveModel(parent.getGroupId(), parent.getArtifactId(), parent.getVersion());
    }

    @Override
    public ModelSource resolveModel(Dependency dependency) throws UnresolvableModelException {
      return resolveModel(dependency.getGroupId(), dependency.getArtifactId(), dependency.getVersion());
    }

    @Override
    public void addRepository(Repository repository) {}

    @Override
    public void addRepository(Repository repository, boolean replace) {}

    @Override
    public ModelResolver newCopy() {
      return this;
    }
  }
}
